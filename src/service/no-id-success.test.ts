import { describe, expect, it } from 'vitest';
import { runCli } from '../real/child.js';
import { tempDirs } from '../testing/temp-dirs.js';

// A 2xx answer whose `operation.resultId` names no effect (a 202 for work
// done later) is a success to the built-in client. It used to be taken for a
// non-retryable failure ("result failed", its body as the error), so a
// service that answered 202 and then lost the job on a kill held: "no effect
// once the client saw success" was never judged.

const tmp = tempDirs();
const SERVICE = 'src/service/fixtures/accepted/lost-on-kill.ts';

describe('a 2xx that names no id is a success', () => {
  it('a 202 whose job dies with its process fails exactly-one, the table and --json agreeing', async () => {
    const args = ['check', '--service', SERVICE, '--runs', '60', '--found', tmp('rs-no-id-')];
    const [text, json] = await Promise.all([runCli(args), runCli([...args, '--json'])]);
    expect(text.code, text.stdout + text.stderr).toBe(1);
    expect(text.stdout).toMatch(/exactly-one \(op1\): the client was told it succeeded, but no export exists/);
    expect(json.code, json.stderr).toBe(1);
    const j = JSON.parse(json.stdout) as { verdict: string; violations: string[] };
    expect(j.verdict).toBe('fails');
    expect(j.violations).toEqual(['exactly-one']);
  }, 120_000);
});
