import http from 'node:http';
import { EventEmitter } from 'node:events';
import express from 'express';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { runServiceCampaign } from '../service/campaign.js';
import type { AppDescriptor } from './descriptor.js';
import { appService } from './define.js';

/**
 * A user brings a framework the docs do not walk through and hands app()
 * the framework's object instead of its Node listener: a Koa application
 * (not app.callback()), a Fastify instance (not app.routing), a Hono app
 * (not getRequestListener(app.fetch)), an http.Server. Each was refused as
 * "got object", naming none of them; Hono's app.fetch handed over as the
 * listener answers with a Response and writes nothing to res, which read as
 * "never answered …: real I/O … it cannot run on virtual time". Each now
 * gets one line saying what to return. Koa and Hono are not dependencies of
 * this repo: their objects are reduced to what the host sees of them.
 */
function orders(app: AppDescriptor['app']): AppDescriptor {
  return {
    name: 'shapes',
    app,
    operation: { path: '/orders', body: (op) => JSON.stringify({ order: op.runId }) },
    effects: { noun: 'order', of: () => [] },
  };
}

const campaign = (app: AppDescriptor['app']) => runServiceCampaign({ def: appService(orders(app)), module: 'shapes', runs: 5, seed: 1, faults: ['loseResponse'] });

/** What Koa's `new Koa()` is to the host: an EventEmitter with use(), callback() and listen(). */
class KoaLike extends EventEmitter {
  use(): this {
    return this;
  }
  callback() {
    return (_q: http.IncomingMessage, r: http.ServerResponse) => r.end();
  }
  listen(): void {}
}

/** What Hono's `new Hono()` is to the host: routes and a fetch(Request) answering a Response. */
const honoLike = () => ({ get() {}, post() {}, fetch: async () => new Response('{"id":1}', { status: 201 }) });

describe('app() returning a framework object instead of its (req, res) listener', () => {
  it('a Koa application: return app.callback()', async () => {
    await expect(campaign(() => new KoaLike() as never)).rejects.toThrow(/^app 'shapes': app\(\) must return a Node request listener \(req, res\) => \.\.\., got a Koa application: return app\.callback\(\)$/);
  });

  it('a Fastify instance: await app.ready(), then return app.routing', async () => {
    await expect(campaign(async () => Fastify() as never)).rejects.toThrow(/got a Fastify instance: await app\.ready\(\), then return app\.routing$/);
  });

  it('an http.Server: return its request listener', async () => {
    await expect(campaign(() => http.createServer(() => undefined) as never)).rejects.toThrow(/got an http\.Server: return the function you pass to createServer\(\)/);
  });

  it('a Hono app: wrap its fetch with getRequestListener', async () => {
    await expect(campaign(() => honoLike() as never)).rejects.toThrow(/got an object with fetch\(\) \(a fetch-API app, such as Hono's\): wrap it as a Node listener, e.g\. getRequestListener\(app\.fetch\) from @hono\/node-server$/);
  });

  it('a fetch-style handler passed as the listener is named as one, not as an app waiting on real I/O', async () => {
    await expect(campaign(() => honoLike().fetch as never)).rejects.toThrow(/^app 'shapes': app\(\) returned a fetch-style handler \(it answered with a Response object and wrote nothing to res\): wrap it as a Node \(req, res\) listener/);
  });

  it('a factory handed over as the listener (the factory uncalled, or the express module itself) is named as one, not as an app waiting on real I/O', async () => {
    const createApp = () => express().post('/orders', (_q, r) => void r.status(201).json({ id: 1 }));
    await expect(campaign(async () => createApp as never)).rejects.toThrow(/^app 'shapes': app\(\) returned a function that, called with \(req, res\), answered nothing and returned a function: a factory, not the listener/);
    await expect(campaign(async () => express as never)).rejects.toThrow(/a factory, not the listener/);
  });

  it('a listener that truly waits on nothing is still told as one (the canary of the fetch-style line)', async () => {
    await expect(campaign(() => () => new Promise(() => undefined))).rejects.toThrow(/never answered POST \/orders: the app waits on neither the store/);
  });
});

describe("a Fastify app's routing returned before app.ready()", () => {
  it('is told to await app.ready(), not left at a TypeError inside Fastify', async () => {
    const notReady = () => {
      const app = Fastify();
      app.post('/orders', async (_req, reply) => reply.code(201).send({ id: 1 }));
      return app.routing;
    };
    await expect(campaign(notReady)).rejects.toThrow(/^app 'shapes': delivering POST \/orders failed: TypeError: .* \(thrown inside Fastify: app\(\) must await app\.ready\(\) before it returns app\.routing\)$/);
  });

  it('the same app awaiting app.ready() is delivered (the canary: the hint is about readiness)', async () => {
    const ready = async () => {
      const app = Fastify();
      app.post('/orders', async (_req, reply) => reply.code(201).send({ id: 1 }));
      await app.ready();
      return app.routing;
    };
    // Delivered and answered; it then fails as an app whose effects count nothing, not as a broken one.
    await expect(campaign(ready)).resolves.toMatchObject({ verdict: 'fails' });
  });
});

describe("the descriptor's app factory", () => {
  it('an Express app given as app itself (not a factory) is refused in one line saying to pass the factory', async () => {
    const app = express();
    app.post('/orders', (_req, res) => void res.status(201).json({ id: 1 }));
    // Until 2026-12: "delivering POST /orders failed: TypeError: Cannot read properties of undefined (reading 'setHeader')".
    expect(() => appService(orders(app as never))).toThrow(/^app 'shapes': the descriptor's app is an Express app itself; app is the factory that builds one: app: \(\{ redis \}\) => \{ const app = express\(\); …; return app; \}$/);
    // The canary: the same app behind a factory is accepted.
    expect(() => appService(orders(() => app))).not.toThrow();
  });

  it('an exception from app() is said to be the factory\'s, not a request\'s delivery failing', async () => {
    await expect(campaign(() => {
      throw new Error('REDIS_URL is not set');
    })).rejects.toThrow(/^app 'shapes': app\(\{ redis \}\) threw while building a process: Error: REDIS_URL is not set \(at .*listener-shape\.test\.ts:\d+:\d+\)\)?$/);
  });
});
