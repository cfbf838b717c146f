import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMain } from '../testing/cli.js';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();

const MODULE = 'src/service/fixtures/pooled-ids.ts';
const ids = (text: string): string[] => [...new Set(text.match(/ord_[A-Za-z0-9_-]{21}/g) ?? [])].sort();

describe('a counterexample of a service whose library keeps a random pool at module level (nanoid\'s)', () => {
  it('check names the ids its file replays to — in the file\'s description and its --html page; they were drawn from what earlier runs left in the pool', async () => {
    const found = tmp('found-');
    const html = tmp('pages-');
    const r = await runMain(['check', '--service', MODULE, '--runs', '200', '--found', found, '--html', html, '--json']);
    expect(r.code, r.err).toBe(1);
    const file = (JSON.parse(r.out) as { counterexample: string }).counterexample;
    const described = ids((JSON.parse(readFileSync(file, 'utf8')) as { description: string }).description);
    expect(described).toHaveLength(2);
    const replayed = await runMain(['replay', file, '--json']);
    expect(replayed.code, replayed.err).toBe(0);
    expect(ids(JSON.stringify((JSON.parse(replayed.out) as { violations: unknown }).violations))).toEqual(described);
    const page = readdirSync(html).find((f) => f.startsWith('pooled-ids-'))!;
    expect(ids(readFileSync(join(html, page), 'utf8'))).toEqual(described);
  }, 120_000);
});
