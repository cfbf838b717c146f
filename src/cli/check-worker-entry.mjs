// Worker threads do not inherit the tsx loader: register it, then load the TS worker.
import { register } from 'tsx/esm/api';

register();
await import('./check-worker.ts');
