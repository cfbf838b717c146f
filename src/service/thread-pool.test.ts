// A service that gzips its answers, hashes a password with scrypt or signs
// with HMAC through crypto.subtle called functions that do the work on
// libuv's thread pool and answer on a later turn of the event loop: the run
// stopped with "the handler awaited something outside the simulation"
// (exit 2) on a good service. Inside a simulated handler they now answer
// from their Sync forms (same bytes, Node's errors where Node gives them);
// outside, they are the real ones. What needs real randomness still escapes,
// and the message says so.
import zlib from 'node:zlib';
import nodeCrypto, { scrypt, pbkdf2, hkdf } from 'node:crypto';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parseScenario } from '../scenario/load.js';
import { runScenario } from '../scenario/run.js';
import type { ServiceDefinition } from './definition.js';
import { ServiceError } from './errors.js';

type Work = () => Promise<unknown>;

/** A service whose one request runs `work` before its step, and answers what it gave. */
function doing(name: string, work: Work, seen: unknown[]): ServiceDefinition {
  return {
    name,
    tables: ['items'],
    setup: (db) => db.exec('CREATE TABLE items (id INTEGER PRIMARY KEY, run TEXT)'),
    steps: ['write'],
    operation: { path: '/items', body: (op) => JSON.stringify({ run: op.runId }) },
    effects: { of: (db, op) => db.prepare('SELECT id FROM items WHERE run = ?').pluck().all(op.runId) as number[] },
    async handle(req, sim) {
      seen.push(await work());
      await sim.step('write');
      const id = Number(sim.db.prepare('INSERT INTO items (run) VALUES (?)').run(JSON.parse(req.body).run).lastInsertRowid);
      return { status: 201, body: JSON.stringify({ id }) };
    },
  };
}

const scenario = (name: string) => parseScenario(JSON.stringify({
  format: 'retrysim.scenario/2', name: 'pool', seed: 1, service: { module: name },
  client: { keySource: 'tool_call', timeoutMs: 10_000 }, network: { latencyMeanMs: 1, latencySdMs: 0 },
  operations: [{ id: 'op1', runId: 'r1', module: 'm', title: 't', workers: 1 }], expect: {},
}));

/** What `work` gives inside a simulated handler (the run must be clean), beside what it gives outside, on the real thread pool. */
async function insideAndOut(name: string, work: Work): Promise<{ inside: unknown; outside: unknown }> {
  const seen: unknown[] = [];
  const def = doing(name, work, seen);
  const r = await runScenario(scenario(name), { service: def });
  expect(r.violations).toEqual([]);
  expect(r.reports).toEqual({ op1: 1 });
  return { inside: seen[0], outside: await work() };
}

const hex = (b: ArrayBuffer | Uint8Array) => Buffer.from(b instanceof ArrayBuffer ? new Uint8Array(b) : b).toString('hex');
const body = Buffer.from('{"order":"o-1","items":["a","b","c"]}'.repeat(20));
const ONE_SHOT = [['gzip', 'gunzip'], ['deflate', 'inflate'], ['deflateRaw', 'inflateRaw'], ['gzip', 'unzip'], ['brotliCompress', 'brotliDecompress']] as const;
type Z = Record<string, (...a: unknown[]) => unknown>;
const z = zlib as unknown as Z;

describe("zlib's one-shot functions in a handler answer within the simulation", () => {
  it.each(ONE_SHOT)('%s / %s, callback and util.promisify forms: the same bytes as the real thread pool', async (pack, unpack) => {
    const { inside, outside } = await insideAndOut(`zlib-${pack}-${unpack}`, async () => {
      const packed = await new Promise<Buffer>((res, rej) => z[pack]!(body, (e: Error | null, b: Buffer) => (e ? rej(e) : res(b))));
      const packedLevel1 = await promisify(z[pack] as (b: Buffer, o: object, cb: (e: Error | null, out: Buffer) => void) => void)(body, pack.startsWith('brotli') ? { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 1 } } : { level: 1 });
      const back = await promisify(z[unpack] as (b: Buffer, cb: (e: Error | null, out: Buffer) => void) => void)(packed);
      return { packed: hex(packed), packedLevel1: hex(packedLevel1), back: back.toString() };
    });
    expect(inside).toEqual(outside);
    expect((inside as { back: string }).back).toBe(body.toString());
  });

  it("keeps Node's errors: bad data reaches the callback, a bad option is thrown at the call", async () => {
    const attempt = (f: (cb: (e: Error | null) => void) => void) => new Promise<string>((res) => {
      try {
        f((e) => res(`callback ${e === null ? 'ok' : `${(e as { code?: string }).code}: ${e.message}`}`));
      } catch (e) {
        res(`thrown ${(e as { code?: string }).code}: ${(e as Error).message}`);
      }
    });
    const { inside, outside } = await insideAndOut('zlib-errors', async () => [
      await attempt((cb) => zlib.gunzip(Buffer.from('not gzip'), cb)),
      await attempt((cb) => zlib.inflate(zlib.deflateSync('hello').subarray(0, 4), cb)),
      await attempt((cb) => zlib.brotliDecompress(Buffer.from('not brotli'), cb)),
      await attempt((cb) => zlib.gunzip(zlib.gzipSync(Buffer.alloc(1000)), { maxOutputLength: 10 }, cb)),
      await attempt((cb) => zlib.gzip('x', { level: 99 }, cb)),
      await attempt((cb) => zlib.gzip(5 as never, cb)),
      await attempt(() => (zlib.gzip as unknown as (b: string) => void)('no callback')),
    ]);
    expect(inside).toEqual(outside);
    expect((inside as string[]).map((s) => s.split(' ')[0])).toEqual(['callback', 'callback', 'callback', 'callback', 'thrown', 'thrown', 'thrown']);
  });
});

describe("node:crypto's scrypt, pbkdf2 and hkdf in a handler answer within the simulation", () => {
  it('callback and util.promisify forms (named imports and the module object): the same bytes as the real thread pool', async () => {
    const { inside, outside } = await insideAndOut('kdf', async () => {
      const s1 = await new Promise<Buffer>((res, rej) => scrypt('pw', 'salt', 32, (e, k) => (e ? rej(e) : res(k))));
      const s2 = await promisify(nodeCrypto.scrypt as (p: string, s: string, n: number, o: object, cb: (e: Error | null, k: Buffer) => void) => void)('pw', 'salt', 16, { N: 1024 });
      const p1 = await promisify(pbkdf2)('pw', 'salt', 1000, 32, 'sha256');
      const h1 = await promisify(hkdf)('sha512', 'key', 'salt', 'info', 48);
      return [hex(s1), hex(s2), hex(p1), hex(h1 as ArrayBuffer)];
    });
    expect(inside).toEqual(outside);
  });

  it("keeps Node's errors: a bad argument is thrown at the call", async () => {
    const { inside, outside } = await insideAndOut('kdf-errors', async () => {
      const thrown = (f: () => void) => {
        try {
          f();
          return 'returned';
        } catch (e) {
          return `${(e as { code?: string }).code}: ${(e as Error).message}`;
        }
      };
      return [
        thrown(() => pbkdf2('pw', 'salt', 1, 16, 'no-such-digest', () => undefined)),
        thrown(() => scrypt('pw', 'salt', 16, { N: 3 }, () => undefined)),
        thrown(() => hkdf('sha256', 'k', 's', 'i', 255 * 32 + 1, () => undefined)),
      ];
    });
    expect(inside).toEqual(outside);
    expect((inside as string[]).every((s) => s.startsWith('ERR_'))).toBe(true);
  });
});

describe("crypto.subtle's deterministic calls in a handler answer within the simulation", () => {
  it('HMAC and Ed25519 sign/verify, AES-GCM/CBC/CTR encrypt/decrypt, PBKDF2/HKDF deriveBits and deriveKey: the same bytes', async () => {
    const ed = nodeCrypto.generateKeyPairSync('ed25519');
    const edPkcs8 = ed.privateKey.export({ format: 'der', type: 'pkcs8' });
    const edSpki = ed.publicKey.export({ format: 'der', type: 'spki' });
    const s = crypto.subtle;
    const raw = new Uint8Array(32).map((_, i) => i);
    const data = new TextEncoder().encode('{"amount":100}');
    const { inside, outside } = await insideAndOut('subtle', async () => {
      const hk = await s.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, true, ['sign', 'verify']);
      const mac = await s.sign('HMAC', hk, data);
      const gk = await s.importKey('raw', raw, 'AES-GCM', false, ['encrypt', 'decrypt']);
      const iv = new Uint8Array(12).fill(9);
      const sealed = await s.encrypt({ name: 'AES-GCM', iv, additionalData: raw, tagLength: 96 }, gk, data);
      const opened = await s.decrypt({ name: 'AES-GCM', iv, additionalData: raw, tagLength: 96 }, gk, sealed);
      const tampered = new Uint8Array(sealed);
      tampered[0]! ^= 1;
      const rejected = await s.decrypt({ name: 'AES-GCM', iv, additionalData: raw, tagLength: 96 }, gk, tampered).then(() => 'opened', (e: Error) => `${e.name}: ${e.message}`);
      const ck = await s.importKey('raw', raw.subarray(0, 16), 'AES-CBC', false, ['encrypt', 'decrypt']);
      const cbc = await s.encrypt({ name: 'AES-CBC', iv: new Uint8Array(16) }, ck, data);
      const tk = await s.importKey('raw', raw, 'AES-CTR', false, ['encrypt', 'decrypt']);
      const ctr = await s.encrypt({ name: 'AES-CTR', counter: new Uint8Array(16).fill(1), length: 64 }, tk, data);
      const pk = await s.importKey('raw', new TextEncoder().encode('password'), 'PBKDF2', false, ['deriveBits', 'deriveKey']);
      const pb = await s.deriveBits({ name: 'PBKDF2', salt: raw, iterations: 1000, hash: 'SHA-256' }, pk, 256);
      const dk = await s.deriveKey({ name: 'PBKDF2', salt: raw, iterations: 1000, hash: 'SHA-256' }, pk, { name: 'AES-GCM', length: 256 }, true, ['encrypt']);
      const hkdfKey = await s.importKey('raw', raw, 'HKDF', false, ['deriveBits']);
      const hb = await s.deriveBits({ name: 'HKDF', salt: raw, info: data, hash: 'SHA-384' }, hkdfKey, 384);
      const edPriv = await s.importKey('pkcs8', edPkcs8, { name: 'Ed25519' }, false, ['sign']);
      const edPub = await s.importKey('spki', edSpki, { name: 'Ed25519' }, false, ['verify']);
      const edSig = await s.sign('Ed25519', edPriv, data);
      return {
        mac: hex(mac), macOk: await s.verify('HMAC', hk, mac, data), macBad: await s.verify('HMAC', hk, mac, raw),
        sealed: hex(sealed), opened: new TextDecoder().decode(opened), rejected,
        cbc: hex(cbc), cbcBack: new TextDecoder().decode(await s.decrypt({ name: 'AES-CBC', iv: new Uint8Array(16) }, ck, cbc)),
        ctr: hex(ctr), pb: hex(pb), dk: hex(await s.exportKey('raw', dk)), hb: hex(hb),
        edSig: hex(edSig), edOk: await s.verify('Ed25519', edPub, edSig, data),
      };
    });
    expect(inside).toEqual(outside);
    expect(inside).toMatchObject({ macOk: true, macBad: false, opened: '{"amount":100}', rejected: 'OperationError: The operation failed for an operation-specific reason', edOk: true });
  });

  it('RSASSA-PKCS1-v1_5 sign/verify, RSA-PSS and ECDSA verify (a JWT\'s RS256, PS256, ES256): the same answers', async () => {
    const s = crypto.subtle;
    const der = (k: nodeCrypto.KeyObject, type: 'pkcs8' | 'spki') => k.export({ format: 'der', type });
    const rsa = nodeCrypto.generateKeyPairSync('rsa', { modulusLength: 1024 });
    const ec = nodeCrypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const data = new TextEncoder().encode('header.payload');
    // Signed outside the run: PSS and ECDSA draw a salt or nonce, so their signatures are made on the real thread pool.
    const pssKey = await s.importKey('pkcs8', der(rsa.privateKey, 'pkcs8'), { name: 'RSA-PSS', hash: 'SHA-256' }, false, ['sign']);
    const pssSig = await s.sign({ name: 'RSA-PSS', saltLength: 32 }, pssKey, data);
    const ecKey = await s.importKey('pkcs8', der(ec.privateKey, 'pkcs8'), { name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign']);
    const ecSig = await s.sign({ name: 'ECDSA', hash: 'SHA-256' }, ecKey, data);
    const { inside, outside } = await insideAndOut('subtle-rsa-ec', async () => {
      const rsPriv = await s.importKey('pkcs8', der(rsa.privateKey, 'pkcs8'), { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, false, ['sign']);
      const rsPub = await s.importKey('spki', der(rsa.publicKey, 'spki'), { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, false, ['verify']);
      const rs = await s.sign('RSASSA-PKCS1-v1_5', rsPriv, data);
      const psPub = await s.importKey('spki', der(rsa.publicKey, 'spki'), { name: 'RSA-PSS', hash: 'SHA-256' }, false, ['verify']);
      const ecPub = await s.importKey('spki', der(ec.publicKey, 'spki'), { name: 'ECDSA', namedCurve: 'P-256' }, false, ['verify']);
      return {
        rs: hex(rs), rsOk: await s.verify('RSASSA-PKCS1-v1_5', rsPub, rs, data), rsBad: await s.verify('RSASSA-PKCS1-v1_5', rsPub, rs, new Uint8Array(3)),
        psOk: await s.verify({ name: 'RSA-PSS', saltLength: 32 }, psPub, pssSig, data), psBad: await s.verify({ name: 'RSA-PSS', saltLength: 32 }, psPub, pssSig, new Uint8Array(3)),
        ecOk: await s.verify({ name: 'ECDSA', hash: 'SHA-256' }, ecPub, ecSig, data), ecBad: await s.verify({ name: 'ECDSA', hash: 'SHA-256' }, ecPub, ecSig, new Uint8Array(3)),
      };
    });
    expect(inside).toEqual(outside);
    expect(inside).toMatchObject({ rsOk: true, rsBad: false, psOk: true, psBad: false, ecOk: true, ecBad: false });
  });

  it('a wrong key or usage is still rejected, in WebCrypto\'s words', async () => {
    const { inside, outside } = await insideAndOut('subtle-errors', async () => {
      const s = crypto.subtle;
      const k = await s.importKey('raw', new Uint8Array(32), 'AES-GCM', false, ['encrypt']);
      const hk = await s.importKey('raw', new Uint8Array(32), { name: 'HMAC', hash: 'SHA-1' }, false, ['verify']);
      const why = (p: Promise<unknown>) => p.then(() => 'answered', (e: Error) => `${e.name}: ${e.message}`);
      return [
        await why(s.decrypt({ name: 'AES-GCM', iv: new Uint8Array(12) }, k, new Uint8Array(32))),
        await why(s.sign('HMAC', hk, new Uint8Array(1))),
        await why(s.sign('HMAC', k, new Uint8Array(1))),
        await why(s.decrypt({ name: 'AES-GCM', iv: new Uint8Array(12) }, k, new Uint8Array(4))),
      ];
    });
    expect(inside).toEqual(outside);
    expect((inside as string[]).every((s) => s.startsWith('InvalidAccessError') || s.startsWith('OperationError'))).toBe(true);
  });
});

describe('what needs real randomness, or a stream, still escapes the simulation, and the message says so', () => {
  it.each([
    // Slow ones (RSA keys, a few MB through a stream): a call the pool answers within the same turn would slip past the check that sees the handler idle.
    ['crypto.subtle.generateKey', () => crypto.subtle.generateKey({ name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' }, false, ['sign'])],
    ['crypto.generateKeyPair', () => promisify(nodeCrypto.generateKeyPair)('rsa', { modulusLength: 2048 })],
    ['a zlib stream', () => new Promise((res) => zlib.createGzip({ level: 9 }).on('data', res).end(nodeCrypto.createHash('sha512').update('x').digest().toString('hex').repeat(40_000)))],
  ])('%s: exit 2, "never answered", and the line names only what still escapes', async (_what, work) => {
    const err = await runScenario(scenario('escapes'), { service: doing('escapes', work as Work, []) }).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(ServiceError);
    const msg = (err as Error).message;
    expect(msg).toMatch(/never answered request .*awaited something outside the simulation/);
    expect(msg).toMatch(/crypto\.subtle\.generateKey/);
    expect(msg).toMatch(/createGzip/);
    // Answered within the simulation now: the line must not send the reader to them.
    for (const answered of ['zlib.gzip,', 'crypto.scrypt', 'crypto.subtle.sign', 'whose Sync form']) expect(msg).not.toContain(answered);
  });
});

describe('outside a simulated run they are the real functions', () => {
  it('after a run, gzip and scrypt go to the thread pool again (the callback comes after an immediate), and crypto.subtle.sign is the prototype\'s', async () => {
    await insideAndOut('after', async () => hex(await promisify(zlib.gzip)('x')));
    const order: string[] = [];
    const done = new Promise<void>((res) => zlib.gzip('x', () => {
      order.push('gzip');
      res();
    }));
    process.nextTick(() => order.push('tick'));
    await done;
    expect(order).toEqual(['tick', 'gzip']);
    expect(Object.getPrototypeOf(crypto.subtle).sign).toBe(crypto.subtle.sign);
  });
});
