/**
 * The commands check prints to paste back (`reproduce:`, `replay:`) run as
 * printed when a module or a file sits in a folder whose name has a space
 * (`my svc/orders.ts`): they printed the path bare, two words for the shell,
 * and the pasted line ran something else. Each line here goes through sh.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../real/child.js';
import { tempDirs } from '../testing/temp-dirs.js';

const tmp = tempDirs();
const ROOT = join(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'retrysim.js');

/** Runs a printed `retrysim …` line through sh, as a user pasting it would (retrysim being this checkout's bin). */
function paste(line: string): { code: number; out: string } {
  const cmd = line.replace(/^retrysim /, `'${process.execPath}' '${BIN}' `);
  try {
    return { code: 0, out: execFileSync('sh', ['-c', cmd], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }) };
  } catch (e) {
    const x = e as { status: number; stdout: string };
    return { code: x.status, out: x.stdout };
  }
}

describe('printed commands survive a path with a space', () => {
  it('check --service: its reproduce and replay lines, pasted into sh, run the same campaign and replay the file', async () => {
    const d = join(tmp('rs-space-'), 'my svc');
    mkdirSync(d);
    copyFileSync(join(ROOT, 'examples', 'payments-check-then-insert', 'service.ts'), join(d, 'service.ts'));
    const found = join(d, 'found dir');
    const r = await runCli(['check', '--service', join(d, 'service.ts'), '--runs', '100', '--found', found]);
    expect(r.code, r.stderr).toBe(1);
    const reproduce = /^reproduce: (.*)$/m.exec(r.stdout)![1]!;
    const replay = /^ {2}replay: (.*)$/m.exec(r.stdout)![1]!;
    expect(replay).toContain(`'${join(d, 'service.ts')}'`);
    const again = paste(`${reproduce} --found '${found}' --json`);
    expect(again.code).toBe(1);
    expect(JSON.parse(again.out)).toMatchObject({ verdict: 'fails' });
    const rep = paste(replay);
    expect(rep.code).toBe(0);
    expect(rep.out).toContain('expect: met');
  }, 120_000);

  it('check --client: the reproduce line quotes the client module too', async () => {
    const d = join(tmp('rs-space-client-'), 'my client');
    mkdirSync(d);
    copyFileSync(join(ROOT, 'examples', 'fetch-retry-client', 'client.ts'), join(d, 'client.ts'));
    const r = await runCli(['check', '--client', join(d, 'client.ts'), '--runs', '20', '--found', join(d, 'found')]);
    const reproduce = /^reproduce: (.*)$/m.exec(r.stdout)![1]!;
    expect(reproduce).toContain(`'${join(d, 'client.ts')}'`);
    expect(paste(`${reproduce} --json`).code).toBe(r.code);
  }, 120_000);
});
