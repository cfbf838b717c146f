/** Small DOM helpers shared by the pages' scripts (no framework: the pages must stay small and offline). */

type Child = Node | string | number | null | undefined | false;
type Attrs = Record<string, string | number | boolean | undefined | null>;

function fill(node: Element, attrs: Attrs | undefined, children: Child[]): void {
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    node.append(typeof c === 'string' || typeof c === 'number' ? String(c) : c);
  }
}

/** An HTML element with attributes and children. */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attrs?: Attrs, ...children: Child[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  fill(node, attrs, children);
  return node;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/** An SVG element with attributes and children. */
export function svg(tag: string, attrs?: Attrs, ...children: Child[]): SVGElement {
  const node = document.createElementNS(SVG_NS, tag) as SVGElement;
  fill(node, attrs, children);
  return node;
}

/** The JSON the page generator embedded in `#retrysim-data`. */
export function readData<T>(): T {
  const node = document.getElementById('retrysim-data');
  if (node === null) throw new Error('page data (#retrysim-data) is missing');
  return JSON.parse(node.textContent ?? 'null') as T;
}

/**
 * Marks the page interactive: `html[data-ready]` for tests to wait on, and a
 * performance mark whose startTime is the time since navigation began.
 */
export function markReady(): void {
  document.documentElement.dataset.ready = 'true';
  performance.mark('retrysim-ready');
}

/** The `#a=1&b=2` part of the URL as a map. */
export function readHash(): Map<string, string> {
  return new Map(new URLSearchParams(location.hash.replace(/^#/, '')).entries());
}

/** Replaces the URL's hash without adding a history entry (works from file:// too). */
export function writeHash(params: Record<string, string>): void {
  const text = '#' + new URLSearchParams(params).toString();
  if (location.hash === text) return;
  try {
    history.replaceState(null, '', text);
  } catch {
    location.hash = text;
  }
}
