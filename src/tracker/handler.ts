import { CrashFault } from './faults.js';
import { fingerprint } from './fingerprint.js';
import { errorResponse, type TrackerRequest, type TrackerResponse } from './messages.js';
import { getReport, listReports } from './reads.js';
import { scopeKey } from './scope.js';
import { isSqliteError } from './store.js';
import type { StrategyContext, Variant, WriteRequest, WriteStrategy } from './strategy.js';
import { validateContentType, validateKey, validateReportBody, validateTenant, type ReportInput } from './validate.js';

/**
 * The tracker's HTTP surface (SPEC §3), independent of who hosts it: routes,
 * validation (bad input never reaches a strategy, so it never writes), the
 * write strategy, and the mapping of expected failures to answers. The
 * simulation hosts it through the service API (service.ts), real mode
 * through {@link TrackerInstance}; both hand it the same strategies.
 */
export async function serveTracker(req: TrackerRequest, variant: Variant, strategy: WriteStrategy, ctx: StrategyContext): Promise<TrackerResponse> {
  const q = req.path.indexOf('?');
  const pathname = q < 0 ? req.path : req.path.slice(0, q);
  const method = req.method.toUpperCase();
  if (method === 'GET') {
    // Reads are scoped by tenant like writes (SPEC §5 invariant 4).
    const tenant = validateTenant(lowerCaseHeaders(req.headers)['x-tenant']);
    if (!tenant.ok) return errorResponse(tenant.status, tenant.error);
    if (pathname === '/reports') return listReports(ctx.store, new URLSearchParams(q < 0 ? '' : req.path.slice(q + 1)), tenant.value);
    const id = /^\/reports\/([^/]+)$/.exec(pathname);
    if (id) {
      let idText: string;
      try {
        idText = decodeURIComponent(id[1]!);
      } catch {
        return errorResponse(400, `malformed escape in report id '${id[1]}'`);
      }
      return getReport(ctx.store, idText, tenant.value);
    }
  }
  if (pathname === '/reports') {
    // `return await`: returning the promise itself from an async function costs two more microtask ticks.
    if (method === 'POST') return await post(req, variant, strategy, ctx);
    return errorResponse(405, `method ${method} not allowed on /reports`, { allow: 'GET, POST' });
  }
  const m = /^\/reports\/([^/]+)$/.exec(pathname);
  if (m) {
    return errorResponse(405, `method ${method} not allowed on ${pathname}`, { allow: 'GET' });
  }
  return errorResponse(404, `no route for ${method} ${pathname}`);
}

async function post(req: TrackerRequest, variant: Variant, strategy: WriteStrategy, ctx: StrategyContext): Promise<TrackerResponse> {
  const write = validate(req, variant);
  if ('status' in write) return write;
  try {
    return await strategy.write(write, ctx);
  } catch (e) {
    if (e instanceof CrashFault) return errorResponse(500, `internal error: ${e.message}`);
    if (isSqliteError(e, 'SQLITE_BUSY')) return errorResponse(503, 'database busy; retry', { 'retry-after': '1' });
    throw e; // a programming error: let it surface instead of hiding it as a 500
  }
}

function validate(req: TrackerRequest, variant: Variant): WriteRequest | TrackerResponse {
  const headers = lowerCaseHeaders(req.headers);
  const key = validateKey(headers['idempotency-key']);
  if (!key.ok) return errorResponse(key.status, key.error);
  const tenant = validateTenant(headers['x-tenant']);
  if (!tenant.ok) return errorResponse(tenant.status, tenant.error);
  const type = validateContentType(headers['content-type']);
  if (!type.ok) return errorResponse(type.status, type.error);
  const body = checkBody(req.body);
  if (!body.ok) return errorResponse(body.status, body.error);
  return {
    tenant: tenant.value,
    key: key.value,
    // key_atomic_unscoped keys its table by the raw key: the tenant-leak canary.
    scopedKey: key.value === null ? null : variant === 'key_atomic_unscoped' ? key.value : scopeKey(tenant.value, 'POST', key.value),
    report: body.value,
    fingerprint: body.fingerprint,
  };
}

type CheckedBody = { ok: true; value: ReportInput; fingerprint: string } | { ok: false; status: 400 | 413 | 415; error: string };

/**
 * Validation and fingerprint of recently seen bodies. Both are pure
 * functions of the body text, and a retrying client sends the same text
 * again and again, so the schema check and the SHA-256 run once per text.
 * Small bodies only, and a bounded number of them: the memo is a cache, not
 * a store. Cached values are frozen, since they are shared between requests.
 */
const bodyMemo = new Map<string, CheckedBody>();
const BODY_MEMO_ENTRIES_MAX = 256;
const BODY_MEMO_CHARS_MAX = 4096;

function checkBody(text: string): CheckedBody {
  const hit = bodyMemo.get(text);
  if (hit !== undefined) return hit;
  const v = validateReportBody(text);
  const checked: CheckedBody = v.ok
    ? Object.freeze({ ok: true as const, value: Object.freeze(v.value), fingerprint: fingerprint(v.value) })
    : Object.freeze(v);
  if (text.length <= BODY_MEMO_CHARS_MAX) {
    if (bodyMemo.size >= BODY_MEMO_ENTRIES_MAX) bodyMemo.clear();
    bodyMemo.set(text, checked);
  }
  return checked;
}

/** Header names are specified lower-case; tolerate other casings from hand-built requests. */
function lowerCaseHeaders(h: Readonly<Record<string, string | undefined>>): Readonly<Record<string, string | undefined>> {
  for (const k in h) {
    if (k !== k.toLowerCase()) {
      const out: Record<string, string | undefined> = {};
      for (const [name, v] of Object.entries(h)) out[name.toLowerCase()] = v;
      return out;
    }
  }
  return h;
}
