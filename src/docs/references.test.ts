/**
 * Every citation resolves. Code, help text, page sources and the Markdown
 * cite the domain model as `SPEC §N` (docs/model.md's heading §N) and the
 * design as `DESIGN invariant N` / `docs/design.md invariant N` (its
 * numbered invariants). A citation of a section or invariant those pages do
 * not have, a reference to a SPEC.md or DESIGN.md that is not in the
 * repository, or a Markdown link to a missing file or heading fails here.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { anchors, blocks, links, pages, prose, read } from './test-markdown.js';

const root = join(import.meta.dirname, '..', '..');

/** The sources that may cite the model: everything a person or the CLI shows, and every comment. */
function cited(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(join(root, dir)).flatMap((n) => {
      const p = join(dir, n);
      if (n === 'node_modules' || n === 'screenshots' || n === 'reference-data') return [];
      if (statSync(join(root, p)).isDirectory()) return walk(p);
      return /\.(ts|js|mjs|md|html|css|yml)$/.test(n) ? [p] : [];
    });
  // This file is left out: it spells dangling citations on purpose, for the checker's canary.
  return ['README.md', ...['src', 'properties', 'bench', 'scripts', 'examples', 'docs', 'bin'].flatMap(walk)].filter((f) => f !== join('src', 'docs', 'references.test.ts'));
}

/** The section numbers docs/model.md has: headings `## §N …`. */
function modelSections(): Set<number> {
  return new Set([...read(root, 'docs/model.md').matchAll(/^#{2,3} §(\d+) /gm)].map((m) => Number(m[1])));
}

/** The invariants docs/design.md numbers under "Invariants of the design". */
function designInvariants(): Set<number> {
  const text = read(root, 'docs/design.md');
  const section = text.slice(text.indexOf('## Invariants of the design'));
  const body = section.slice(0, section.indexOf('\n## ', 5) > 0 ? section.indexOf('\n## ', 5) : undefined);
  return new Set([...body.matchAll(/^(\d+)\. \*\*/gm)].map((m) => Number(m[1])));
}

/** Every dangling citation in one text, as "file: what". */
export function danglingCitations(file: string, text: string, sections: Set<number>, invariants: Set<number>): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/(?:SPEC|model\.md)\s*§\s*(\d+)(?:\s*[–-]\s*§?\s*(\d+))?/g)) {
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    for (let n = from; n <= to; n++) if (!sections.has(n)) out.push(`${file}: '${m[0]}' — docs/model.md has no heading §${n}`);
  }
  for (const m of text.matchAll(/(?:DESIGN(?:\.md)?|design\.md)\s+invariants?\s+(\d+)/g)) {
    if (!invariants.has(Number(m[1]))) out.push(`${file}: '${m[0]}' — docs/design.md has no invariant ${m[1]}`);
  }
  for (const m of text.matchAll(/(?<![\w/.-])(SPEC|DESIGN)\.md/g)) {
    out.push(`${file}: '${m[0]}' — there is no ${m[0]} in the repository; cite docs/${m[1] === 'SPEC' ? 'model' : 'design'}.md`);
  }
  return out;
}

describe('citations of the model and the design', () => {
  it('docs/model.md has the sections §1–§7 and docs/design.md the invariants 1–9', () => {
    expect([...modelSections()]).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect([...designInvariants()]).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('every SPEC §N, DESIGN invariant N and docs/*.md citation in the sources, help text, pages and docs resolves', () => {
    const sections = modelSections();
    const invariants = designInvariants();
    const files = cited();
    let citations = 0;
    const dangling: string[] = [];
    for (const f of files) {
      const text = read(root, f);
      citations += [...text.matchAll(/SPEC\s*§|DESIGN(?:\.md)? invariant|design\.md invariant/g)].length;
      dangling.push(...danglingCitations(f, text, sections, invariants));
    }
    // The scan must have found the citations the code is known to carry, or it checked nothing.
    expect(citations).toBeGreaterThan(100);
    expect(dangling).toEqual([]);
  });

  it('the checker catches a citation of a missing section, a missing invariant and a root SPEC.md/DESIGN.md (its canary)', () => {
    const sections = new Set([1, 2, 3]);
    const invariants = new Set([1, 7]);
    expect(danglingCitations('x.ts', '// SPEC §3 and SPEC §1–2, DESIGN invariant 7, docs/design.md invariant 1', sections, invariants)).toEqual([]);
    expect(danglingCitations('x.ts', '// SPEC §8', sections, invariants)).toHaveLength(1);
    expect(danglingCitations('x.ts', '// SPEC §2–4', sections, invariants)).toHaveLength(1);
    expect(danglingCitations('x.ts', '// DESIGN.md invariant 12', sections, invariants)).toHaveLength(2);
    expect(danglingCitations('x.ts', '// see SPEC.md', sections, invariants)).toHaveLength(1);
  });
});

/**
 * The repository paths a page names (`src/real/fixtures/x.ts`,
 * `examples/NAME/…`): the ones under the top-level folders, in inline code,
 * or in prose when they name a file (an extension: "scenarios/s" is a unit);
 * cut at a placeholder (`<variant>`, `*`, an all-caps segment) and at a
 * `:line` suffix. A reader opens them as links.
 */
export function namedPaths(source: string): string[] {
  const out: string[] = [];
  const text = source.replace(/^```[^\n]*\n[\s\S]*?^```\s*$/gm, '');
  const spans = [...text.matchAll(/`([^`\n]+)`/g)].map((s) => ({ text: s[1]!, file: false }));
  const plain = { text: text.replace(/`[^`\n]*`/g, ''), file: true };
  for (const span of [...spans, plain]) {
    for (const m of span.text.matchAll(/(?:^|[\s(=])((?:src|examples|docs|scenarios|properties|bench|scripts|bin)\/[\w./<>*{}-]*)/g)) {
      if (span.file && !/\.[a-z]+[,.)]*$/.test(m[1]!)) continue;
      // A placeholder or glob (`<variant>`, `minimise*.test.ts`, `{a,b}`) names the folder it sits in.
      const whole = m[1]!.replace(/[,.]+$/, '');
      const cut = whole.search(/[<*{]/);
      const path = (cut < 0 ? whole : whole.slice(0, whole.lastIndexOf('/', cut) + 1)).replace(/:\d+(?:-\d+)?$/, '');
      const segments = path.split('/');
      const placeholder = segments.findIndex((s) => /^[A-Z]{2,}$/.test(s.replace(/\..*$/, '')));
      out.push((placeholder < 0 ? segments : segments.slice(0, placeholder)).join('/').replace(/\.$/, ''));
    }
  }
  return out;
}

/** Paths the pages name on purpose although they are gone, each with where it says so. */
const GONE = new Set([
  'src/scenario/port-equal.test.ts', // docs/services.md: "removed with the old path"
]);

describe('links in README.md and docs/', () => {
  it('every repository path a page names, in code or as a file in prose, exists (a reader opens it as a link)', () => {
    const missing: string[] = [];
    let count = 0;
    for (const page of [...pages(root), ...readdirSync(join(root, 'examples')).map((e) => `examples/${e}/README.md`).filter((f) => existsSync(join(root, f)))]) {
      for (const path of namedPaths(read(root, page))) {
        count++;
        if (!GONE.has(path) && !existsSync(join(root, path))) missing.push(`${page}: ${path}`);
      }
    }
    expect(count).toBeGreaterThan(100);
    expect(missing).toEqual([]);
  });

  it('the path scan reads code spans and files in prose, cuts placeholders and line numbers, skips blocks (its canary)', () => {
    expect(namedPaths('see `src/sim/nope.ts` and `retrysim check --service examples/NAME/service.ts`, `src/client/run.ts:182-190`,\n`src/tracker/modules/<variant>.ts`, `scenarios/found/*.json`, `src/campaign/minimise*.test.ts` — (src/in-prose.ts), 120 scenarios/s\n```sh\nls src/in-a-block.ts\n```\n')).toEqual([
      'src/sim/nope.ts',
      'examples',
      'src/client/run.ts',
      'src/tracker/modules/',
      'scenarios/found/',
      'src/campaign/',
      'src/in-prose.ts',
    ]);
  });

  it('every relative link and image points at a file that exists, and every #anchor at a heading of its page', () => {
    const broken: string[] = [];
    let count = 0;
    for (const page of [...pages(root), ...readdirSync(join(root, 'examples')).map((e) => `examples/${e}/README.md`).filter((f) => existsSync(join(root, f)))]) {
      for (const target of links(read(root, page))) {
        count++;
        const [path, anchor] = target.split('#') as [string, string | undefined];
        const file = path === '' ? page : normalize(join(dirname(page), path));
        if (!existsSync(join(root, file))) {
          broken.push(`${page}: ${target} — no file ${file}`);
          continue;
        }
        if (anchor !== undefined && file.endsWith('.md') && !anchors(read(root, file)).has(anchor)) {
          broken.push(`${page}: ${target} — ${relative(root, join(root, file))} has no heading with anchor #${anchor}`);
        }
      }
    }
    expect(count).toBeGreaterThan(30);
    expect(broken).toEqual([]);
  });

  it('the link checker sees a missing heading (its canary)', () => {
    expect(anchors('# A\n## §3 The bug tracker service\n### The guards of `key_atomic`, and their canaries\n```\n# not a heading\n```\n')).toEqual(
      new Set(['a', '3-the-bug-tracker-service', 'the-guards-of-key_atomic-and-their-canaries']),
    );
  });
});

describe('what the README promises a newcomer', () => {
  const readme = read(root, 'README.md');

  it('the first runnable command is within the first 15 lines, and it is the CI contract: npm ci && npm start, npm test', () => {
    const first = blocks('README.md', readme).find((b) => b.lang === 'sh');
    expect(first).toBeDefined();
    expect(first!.line).toBeLessThanOrEqual(15);
    expect(first!.text).toMatch(/^npm ci && npm start\b/m);
    expect(first!.text).toMatch(/^npm test\b/m);
  });

  it('never tells anyone to install retrysim from the registry (it is not published: npm install retrysim is a 404)', () => {
    for (const page of pages(root)) expect(read(root, page), page).not.toMatch(/npm (install|i|add)\s+retrysim(?![\w./-])/);
  });

  it('speaks of verdicts as holds / fails / inconclusive: no "refuted" in the prose, nor in the examples\' READMEs (code blocks included)', () => {
    for (const page of pages(root)) expect(prose(read(root, page)), page).not.toMatch(/\brefuted\b/i);
    const examples = readdirSync(join(root, 'examples')).map((e) => `examples/${e}/README.md`).filter((f) => existsSync(join(root, f)));
    expect(examples.length).toBeGreaterThan(10);
    for (const page of examples) expect(read(root, page), page).not.toMatch(/\brefut(ed|es)\b/i);
  });

  it('an example README runs its property with the examples\' config (the root config finds no test under examples/)', () => {
    const lines = readdirSync(join(root, 'examples'))
      .map((e) => `examples/${e}/README.md`)
      .filter((f) => existsSync(join(root, f)))
      .flatMap((f) => blocks(f, read(root, f)).filter((b) => b.lang === 'sh').flatMap((b) => b.text.split('\n').map((l) => `${f}: ${l}`)));
    const vitest = lines.filter((l) => /\bvitest run\b.*\bexamples\//.test(l));
    expect(vitest.length).toBeGreaterThan(5);
    expect(vitest.filter((l) => !l.includes('-c examples/vitest.config.ts'))).toEqual([]);
    expect(existsSync(join(root, 'examples/vitest.config.ts'))).toBe(true);
  });

  it("the README's layout names every folder of src/, and no folder that is not there", () => {
    const at = readme.indexOf('## Layout');
    const layout = new Set([...readme.slice(at).matchAll(/^src\/(\w+)\s/gm)].map((m) => m[1]!));
    const folders = readdirSync(join(root, 'src')).filter((n) => statSync(join(root, 'src', n)).isDirectory());
    expect(folders.length).toBeGreaterThan(10);
    expect([...layout].sort()).toEqual(folders.sort());
  });

  it('the benchmark table appears once, in docs/benchmarks.md', () => {
    const hits = pages(root).filter((p) => /\|\s*figure\s*\|\s*measured\s*\|/.test(read(root, p)));
    expect(hits).toEqual(['docs/benchmarks.md']);
  });
});
