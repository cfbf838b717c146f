// The built-in 'naive' as a user's service module: `--service src/tracker/modules/naive.ts`
// runs it through exactly the path a user's module takes (the parity suite holds the two equal).
import { builtinService } from '../builtin.js';

export default builtinService('naive');
