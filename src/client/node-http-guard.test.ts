// While guarded (a bridged client run), node:http(s) requests throw and are
// named as the line will show them — whichever form the library calls
// request in (a URL, or options as axios's adapter builds them, port '').
import http from 'node:http';
import https from 'node:https';
import { afterEach, describe, expect, it } from 'vitest';
import { guardNodeHttp } from './node-http-guard.js';

afterEach(() => guardNodeHttp(undefined));

describe('node:http guard', () => {
  it('names the request from a URL, from options (an empty port left out), and through https.get', () => {
    const seen: string[] = [];
    guardNodeHttp((call) => (seen.push(call), new Error('refused')));
    expect(() => http.request('http://service.sim/reports', { method: 'post' })).toThrow('refused');
    expect(() => http.request({ protocol: 'http:', hostname: 'service.sim', port: '', path: '/reports?x=1', method: 'POST' })).toThrow('refused');
    expect(() => http.request({ hostname: 'service.sim', port: 8080, path: '/a' })).toThrow('refused');
    expect(() => https.get(new URL('https://service.sim/orders'))).toThrow('refused');
    expect(seen).toEqual(['POST http://service.sim/reports', 'POST http://service.sim/reports?x=1', 'GET http://service.sim:8080/a', 'GET https://service.sim/orders']);
  });

  it('unguarded, the real function runs (an invalid URL throws Node\'s own error)', () => {
    expect(() => http.request('not a url')).toThrow(/Invalid URL/);
  });
});
