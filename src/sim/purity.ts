/**
 * The "no hidden time or randomness" rule (DESIGN invariant 1), as code:
 * finds reads of real time, real timers and real randomness in simulated
 * sources. Comments are stripped first (they may name the APIs). Allowed:
 * the real-mode adapters (`real-*.ts`, `src/real/`), the fake-timers bridge
 * (it names the APIs it fakes), this scanner, the CLI (it reports wall time
 * to the user), and single lines marked `real-time: allowed`.
 */
export const FORBIDDEN: ReadonlyArray<[RegExp, string]> = [
  [/\bMath\.random\b/, 'Math.random'],
  [/\bDate\.now\b/, 'Date.now'],
  [/\bnew Date\b/, 'new Date'],
  [/\bsetTimeout\b/, 'setTimeout'],
  [/\bsetInterval\b/, 'setInterval'],
  [/\bsetImmediate\b/, 'setImmediate'],
  [/\bperformance\.now\b/, 'performance.now'],
  [/\bprocess\.hrtime\b/, 'process.hrtime'],
  [/\brandomUUID\b/, 'randomUUID'],
  [/\brandomBytes\b/, 'randomBytes'],
  [/\bgetRandomValues\b/, 'getRandomValues'],
];

/** One read of real time or randomness found in simulated code. */
export interface PurityViolation {
  file: string;
  line: number;
  api: string;
  text: string;
}

/** True for files that may touch real time: adapters and the CLI. */
export function isRealModeFile(path: string): boolean {
  return /(^|\/)(real-[^/]*|fake-timers|virtual-node-timers|purity)\.ts$/.test(path) || /(^|\/)src\/(real|cli)\//.test(path) || /\.test\.ts$/.test(path);
}

/** Blanks comments (keeping line numbers) so the scan only sees code. */
function stripComments(src: string): string {
  return src
    .replace(/\/\*[\s\S]*?\*\//g, (m) => m.replace(/[^\n]/g, ' '))
    .replace(/(^|[^:])\/\/(?! real-time: allowed).*$/gm, '$1');
}

/** Scans one file's text for forbidden APIs (comments ignored; `real-time: allowed` lines skipped). */
export function scanSource(file: string, src: string): PurityViolation[] {
  const out: PurityViolation[] = [];
  const lines = stripComments(src).split('\n');
  lines.forEach((text, i) => {
    if (text.includes('// real-time: allowed')) return;
    for (const [re, api] of FORBIDDEN) if (re.test(text)) out.push({ file, line: i + 1, api, text: text.trim() });
  });
  return out;
}
