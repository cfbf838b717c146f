/**
 * The shell every page shares: one self-contained HTML file — styles, data
 * and script inline — that opens from file:// with no server. A Content
 * Security Policy forbids every fetch, image or frame from elsewhere, so a
 * page cannot reach the network even by mistake (the browser test also
 * counts requests).
 */

/** What goes into a page. */
export interface PageParts {
  title: string;
  css: string;
  /** Embedded as JSON; the client script reads it from `#retrysim-data`. */
  data: unknown;
  /** The client bundle (see bundle.ts). */
  script: string;
}

const CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:";

/** The page's HTML. */
export function htmlPage(p: PageParts): string {
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${CSP}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(p.title)}</title>`,
    `<style>${p.css}</style>`,
    '</head>',
    '<body>',
    '<div id="app"><noscript>This page draws itself with JavaScript.</noscript></div>',
    `<script type="application/json" id="retrysim-data">${jsonForScript(p.data)}</script>`,
    `<script>${p.script}</script>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

/** JSON that is safe inside a `<script>` element: no `<` (so no `</script>`), no line separators. */
export function jsonForScript(v: unknown): string {
  return JSON.stringify(v).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

/** Text for HTML element content and attribute values. */
export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}
