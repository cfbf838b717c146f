// The built-in 'key_atomic_nofence' as a user's service module: `--service src/tracker/modules/key_atomic_nofence.ts`
// runs it through exactly the path a user's module takes (the parity suite holds the two equal).
import { builtinService } from '../builtin.js';

export default builtinService('key_atomic_nofence');
