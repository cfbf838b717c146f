/**
 * Reading the project's own Markdown for the documentation tests: fenced
 * blocks with the HTML comment that marks them, headings as GitHub turns
 * them into anchors, and relative links. Test support only; nothing in the
 * product imports it.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A fenced code block and the marker comment right before it, if any. */
export interface Block {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  text: string;
  /** The text of an HTML comment on the line just before the fence (blank lines allowed between). */
  marker: string | undefined;
}

/** Every fenced block of a Markdown text (``` fences; no nesting in this project's pages). */
export function blocks(file: string, source: string): Block[] {
  const lines = source.split('\n');
  const out: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i]!);
    if (open === null) continue;
    let end = i + 1;
    while (end < lines.length && !/^```\s*$/.test(lines[end]!)) end++;
    let j = i - 1;
    while (j >= 0 && lines[j]!.trim() === '') j--;
    const comment = j >= 0 ? /^<!--\s*(.*?)\s*-->$/.exec(lines[j]!.trim()) : null;
    out.push({ file, line: i + 1, lang: open[1]!, text: lines.slice(i + 1, end).join('\n'), marker: comment?.[1] });
    i = end;
  }
  return out;
}

/** The text with fenced blocks and inline code spans removed: what a reader reads as prose. */
export function prose(source: string): string {
  return source.replace(/^```[^\n]*\n[\s\S]*?^```\s*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of a Markdown text's headings (duplicates numbered as GitHub does). */
export function anchors(source: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  const text = source.replace(/^```[^\n]*\n[\s\S]*?^```\s*$/gm, '').replace(/`([^`\n]*)`/g, '$1');
  for (const m of text.matchAll(/^#{1,6}\s+(.+?)\s*$/gm)) {
    const base = slug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Relative link targets of a Markdown text (links and images; web and mail links left out). */
export function links(source: string): string[] {
  const out: string[] = [];
  for (const m of prose(source).matchAll(/!?\[[^\]]*\]\(([^)\s]+)\)/g)) {
    if (!/^[a-z]+:/i.test(m[1]!)) out.push(m[1]!);
  }
  return out;
}

/** The Markdown pages the documentation tests cover: README.md and docs/*.md. */
export function pages(root: string): string[] {
  return ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];
}

/** Reads a file of the repository as text. */
export function read(root: string, file: string): string {
  return readFileSync(join(root, file), 'utf8');
}

/** The examples' READMEs (examples/<name>/README.md), in name order. */
export function examplePages(root: string): string[] {
  return readdirSync(join(root, 'examples')).sort().map((e) => `examples/${e}/README.md`).filter((f) => existsSync(join(root, f)));
}
