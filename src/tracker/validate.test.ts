import { describe, expect, it } from 'vitest';
import { TrackerInstance } from './instance.js';
import { openStore } from './store.js';
import { VARIANTS } from './strategy.js';
import { json, post, reportBody, TestEnv } from './test-env.js';
import { MAX_BODY_BYTES, validateKey, validateReportBody } from './validate.js';

describe('validateReportBody', () => {
  it('accepts the four string fields', () => {
    expect(validateReportBody(reportBody())).toMatchObject({ ok: true, value: { run_id: 'run-1' } });
  });

  it.each([
    [reportBody({ title: undefined }), "missing field 'title'"],
    [reportBody({ steps: 3 }), "field 'steps' must be a string, got number"],
    [reportBody({ module: null }), "field 'module' must be a string, got null"],
    [reportBody({ run_id: '' }), "field 'run_id' must not be empty"],
    [reportBody({ extra: 1 }), "unknown field(s): 'extra'"],
    ['[1,2]', 'body must be a JSON object, got array'],
    ['{"run_id": ', 'malformed JSON body'],
  ])('rejects %s with 400 naming the problem', (body, message) => {
    const r = validateReportBody(body);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.status).toBe(400);
      expect(r.error).toContain(message);
    }
  });

  it('rejects a body over 64 KiB with 413, counting UTF-8 bytes', () => {
    const big = reportBody({ steps: 'x'.repeat(MAX_BODY_BYTES) });
    expect(validateReportBody(big)).toMatchObject({ ok: false, status: 413 });
    // 30k three-byte characters: under the limit in UTF-16 units, over it in bytes.
    const wide = reportBody({ steps: '€'.repeat(30_000) });
    expect(validateReportBody(wide)).toMatchObject({ ok: false, status: 413 });
  });

  it('keys must be 1–255 characters', () => {
    expect(validateKey(undefined)).toEqual({ ok: true, value: null });
    expect(validateKey('k'.repeat(255))).toMatchObject({ ok: true });
    expect(validateKey('k'.repeat(256))).toMatchObject({ ok: false, status: 400 });
    expect(validateKey('')).toMatchObject({ ok: false, status: 400 });
  });
});

describe.each(VARIANTS)('bad input never writes anything (%s)', (variant) => {
  const cases: [string, { key?: string; body?: string }, number, string][] = [
    ['missing field', { key: 'k', body: reportBody({ steps: undefined }) }, 400, 'steps'],
    ['wrong type', { key: 'k', body: reportBody({ title: 42 }) }, 400, 'title'],
    ['malformed JSON', { key: 'k', body: '{nope' }, 400, 'JSON'],
    ['key of 256 chars', { key: 'k'.repeat(256) }, 400, 'idempotency-key'],
    ['empty key', { key: '' }, 400, 'idempotency-key'],
    ['too large', { key: 'k', body: reportBody({ steps: 'x'.repeat(70_000) }) }, 413, 'limit'],
  ];
  it.each(cases)('%s', async (_name, opts, status, mention) => {
    const store = openStore();
    const inst = new TrackerInstance({ variant, db: store });
    const res = await post(inst, new TestEnv(), opts);
    expect(res.status).toBe(status);
    expect(String(json(res).error)).toContain(mention);
    expect(store.countReports()).toBe(0);
    expect(store.keyRows()).toHaveLength(0);
    store.close();
  });
});
