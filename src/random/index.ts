export { Prng, mix32, hashString } from './prng.js';
export { standardNormal, normal, absNormal } from './normal.js';
