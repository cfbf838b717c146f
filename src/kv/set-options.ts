import type { SetOptions } from './store.js';

/**
 * SET's options as node-redis spells them: v4's flags (`NX`, `PX`, ...) and
 * v5's `condition` and `expiration` (v5 keeps the flags as deprecated
 * aliases). An app written for either passes one of these objects.
 */
export interface NodeRedisSetOptions extends SetOptions {
  /** v5: `'NX'` or `'XX'`. */
  condition?: 'NX' | 'XX';
  /** v5: `{ type: 'EX' | 'PX', value }`, `{ type: 'KEEPTTL' }` or `'KEEPTTL'`. */
  expiration?: { type: 'EX' | 'PX' | 'EXAT' | 'PXAT'; value: number } | { type: 'KEEPTTL' } | 'KEEPTTL';
  /** Absolute expiry in unix seconds / ms: not simulated (the store's clock is virtual time), refused in one line. */
  EXAT?: number;
  PXAT?: number;
}

/**
 * The store's options for what node-redis would send, or the name of what
 * the simulated store cannot do (`set(…, { PXAT })`). node-redis sends one
 * expiry and one condition, first match wins in its own order
 * (`expiration`, EX, PX, EXAT, PXAT, KEEPTTL; `condition`, NX, XX):
 * reading only v4's flags made a v5 app's `{ condition: 'NX' }` claim a
 * plain overwrite, and a correct app "failed" on a race it does not have.
 */
export function storeSetOptions(o: NodeRedisSetOptions): SetOptions | { unsupported: string } {
  const out: SetOptions = {};
  const exp = o.expiration;
  if (exp !== undefined) {
    const type = typeof exp === 'string' ? exp : (exp as { type?: unknown }).type;
    if (type === 'KEEPTTL') out.KEEPTTL = true;
    else if (type === 'EX' || type === 'PX') out[type] = (exp as { value: number }).value;
    else return { unsupported: `set(…, { expiration: { type: ${JSON.stringify(type)} } })` };
  } else if (o.EX !== undefined) out.EX = o.EX;
  else if (o.PX !== undefined) out.PX = o.PX;
  else if (o.EXAT !== undefined) return { unsupported: 'set(…, { EXAT })' };
  else if (o.PXAT !== undefined) return { unsupported: 'set(…, { PXAT })' };
  else if (o.KEEPTTL) out.KEEPTTL = true;
  if (o.condition !== undefined) {
    if (o.condition === 'NX' || o.condition === 'XX') out[o.condition] = true;
    else return { unsupported: `set(…, { condition: ${JSON.stringify(o.condition)} })` };
  } else if (o.NX) out.NX = true;
  else if (o.XX) out.XX = true;
  if (o.GET) out.GET = true;
  return out;
}
