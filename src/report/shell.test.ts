import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { shellArg, shellLine } from './shell.js';

describe('a printed command line reads back as the words it was made of', () => {
  it('plain paths as they are; a space, a quote, a $ or a glob in single quotes', () => {
    expect(shellArg('examples/payments-atomic/service.ts')).toBe('examples/payments-atomic/service.ts');
    expect(shellArg('--seed=1')).toBe('--seed=1');
    expect(shellArg('my svc/orders.ts')).toBe("'my svc/orders.ts'");
    expect(shellArg("it's.ts")).toBe("'it'\\''s.ts'");
    expect(shellArg('')).toBe("''");
  });

  it('sh reads every line back into the same words', () => {
    const words = ['retrysim', 'replay', '--service', 'my svc/orders.ts', "o'brien/$HOME/*.json", 'a\tb', '--trace'];
    const echoed = execFileSync('sh', ['-c', `printf '%s\\n' ${shellLine(words.slice(1))}`], { encoding: 'utf8' });
    expect(echoed.split('\n').slice(0, -1)).toEqual(words.slice(1));
  });
});
