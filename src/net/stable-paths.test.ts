import { describe, expect, it } from 'vitest';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { stableBody, stableHeaders } from './stable-paths.js';

/**
 * An Express error page names the stack's files: the user's checkout and
 * retrysim's CLI bundle, rebuilt into a new directory per build. The trace
 * records (and hashes) the page without them, so `check` and a later
 * `replay` — or another machine — agree on the trace.
 */
describe('answer bodies as the trace records them', () => {
  const page = (root: string, build: string) =>
    `<pre>Error: lost<br> &nbsp;at serveRequest (${pathToFileURL(join(root, 'node_modules/.cache/retrysim', build, 'chunk-BF7LHKRF.mjs')).href}:608:23)` +
    `<br> &nbsp;at handler (${join(root, 'app.js')}:12:5)</pre>`;

  it('two builds of the bundle give one recorded body, relative to the working directory', () => {
    const a = stableBody(page(process.cwd(), 'cli-3372-1796178737701'));
    const b = stableBody(page(process.cwd(), 'cli-41-1796178999999'));
    expect(a).toBe(b);
    expect(a).toBe('<pre>Error: lost<br> &nbsp;at serveRequest (node_modules/.cache/retrysim/cli/chunk-BF7LHKRF.mjs:608:23)<br> &nbsp;at handler (app.js:12:5)</pre>');
  });

  it('a body without a path is returned as it is (the same string)', () => {
    const body = '{"id":1,"client":"cli-x"}';
    expect(stableBody(body)).toBe(body);
  });

  it('the hashed content-length is the recorded body\'s', () => {
    const sent = page(process.cwd(), 'cli-3372-1796178737701');
    const recorded = stableBody(sent);
    expect(stableHeaders({ 'Content-Type': 'text/html', 'Content-Length': String(Buffer.byteLength(sent)) }, recorded))
      .toEqual({ 'Content-Type': 'text/html', 'Content-Length': String(Buffer.byteLength(recorded)) });
  });
});
