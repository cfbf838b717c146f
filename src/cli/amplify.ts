/**
 * `retrysim amplify`: retry amplification across layers (SPEC §6) and what a
 * retry budget or a token bucket per layer does to it.
 */
import { flags, intFlag, numFlag, seedFlag, usage, UsageError } from './args.js';
import { textTable } from '../report/table.js';
import {
  CONTROLS,
  amplificationTable,
  expectedRequestsPerCall,
  isControl,
  simulateAmplification,
  uniformStack,
  type AmplificationRow,
  type Control,
} from '../retry/amplification.js';

const HELP = `Usage: retrysim amplify [options]

Independent retries multiply across layers: L services stacked on a failing
backend, each retrying up to A attempts, send it A^L requests per logical
call. Runs the layered model on the simulation kernel for 1..L layers with no
control, with a 10 % retry budget per layer and with an AWS-style token
bucket per layer (each shared by all concurrent calls through the layer).

Options:
  --layers N          layers in the stack (default 5)
  --attempts N|LIST   attempts per layer, first included (default 3); a comma
                      list gives each layer its own, outermost first (4,3 is
                      harness 4 × SDK 3) and sets the number of layers
  --calls N           concurrent logical calls sharing each layer's limit (default 200)
  --failure-rate P    probability a backend request fails, 0..1 (default 1)
  --budget KIND       only this control: ${CONTROLS.join('|')} (default: all three)
  --seed N            the one seed (default 1)
  --json              print JSON instead of the tables
  -h, --help          this text

Exit: 0, 2 bad flags (a value out of range: at most 20 layers, 10 attempts,
100,000 calls and 3 M requests in the worst case).`;

/** One of the SPEC §6 figures, computed by the simulation next to its closed form. */
const SPEC_FIGURES: ReadonlyArray<{ label: string; formula: string; attempts: number[] }> = [
  { label: '3 attempts × 5 layers', formula: '3^5', attempts: uniformStack(5, 3) },
  { label: '3 layers × 3 attempts', formula: '3^3', attempts: uniformStack(3, 3) },
  { label: 'harness 4 × SDK 3', formula: '4 × 3', attempts: [4, 3] },
];

interface Opts {
  attempts: number[];
  calls: number;
  failureRate: number;
  controls: Control[];
  seed: number;
  json: boolean;
}

/** Bounds of the flags: beyond them the table would take minutes or exhaust the kernel's event limit. */
const LAYERS_MAX = 20;
const ATTEMPTS_MAX = 10;
const CALLS_MAX = 100_000;
/**
 * Requests the layers may send, over the whole table, if every backend
 * request failed: the worst case the simulation must be able to run. At
 * ~3 kernel events per request, 3 M is ~10 s of simulation (5 layers × 3
 * attempts × 200 calls is 0.12 M; 8 layers is 2.8 M).
 */
export const LAYER_REQUESTS_MAX = 3_000_000;

/** Layer requests of the whole table (stacks 1..L) when every backend request fails. */
export function worstCaseLayerRequests(attempts: readonly number[], calls: number): number {
  let total = 0;
  for (let depth = 1; depth <= attempts.length; depth++) {
    let product = 1;
    for (let l = 0; l < depth; l++) {
      product *= attempts[l]!;
      total += product;
    }
  }
  return total * calls;
}

function parseAttempts(raw: string | undefined, layersRaw: string | undefined): number[] {
  const layers = intFlag('layers', layersRaw, 5, 1, LAYERS_MAX);
  if (raw === undefined || !raw.includes(',')) return uniformStack(layers, intFlag('attempts', raw, 3, 1, ATTEMPTS_MAX));
  const list = raw.split(',').map((s) => intFlag('attempts', s, 0, 1, ATTEMPTS_MAX));
  if (list.length > LAYERS_MAX) throw new UsageError(`--attempts lists ${list.length} layers; at most ${LAYERS_MAX}`);
  if (layersRaw !== undefined && layers !== list.length) throw new UsageError(`--layers ${layers} does not match the ${list.length} entries of --attempts ${raw}`);
  return list;
}

function parseRate(raw: string | undefined): number {
  return numFlag('failure-rate', raw, 1, 0, 1);
}

/** Entry point of `retrysim amplify`. */
export async function run(argv: string[]): Promise<number> {
  const a = flags(
    'amplify',
    argv,
    {
      layers: { type: 'string' },
      attempts: { type: 'string' },
      calls: { type: 'string' },
      'failure-rate': { type: 'string' },
      budget: { type: 'string' },
      seed: { type: 'string' },
      json: { type: 'boolean' },
    },
    HELP,
  );
  if (typeof a === 'number') return a;
  return usage('amplify', async () => {
    const v = a.values;
    const budget = v.budget;
    if (budget !== undefined && !isControl(budget)) throw new UsageError(`--budget must be one of ${CONTROLS.join(', ')}, got '${budget}'`);
    const o: Opts = {
      attempts: parseAttempts(v.attempts, v.layers),
      calls: intFlag('calls', v.calls, 200, 1, CALLS_MAX),
      failureRate: parseRate(v['failure-rate']),
      controls: budget === undefined ? [...CONTROLS] : [budget],
      seed: seedFlag(v.seed),
      json: v.json === true,
    };
    const work = worstCaseLayerRequests(o.attempts, o.calls);
    if (work > LAYER_REQUESTS_MAX) {
      throw new UsageError(`${o.attempts.length} layers of ${o.attempts.join(' × ')} attempts with ${o.calls} calls could send ` +
        `${work.toExponential(2)} requests (limit ${LAYER_REQUESTS_MAX.toExponential(0)}); lower --layers, --attempts or --calls`);
    }
    return amplify(o);
  });
}

const fmt = (x: number): string => (Number.isInteger(x) ? String(x) : x.toFixed(2));
/** A row's numbers: all integers stay integers, else every cell gets two decimals (so a row lines up). */
const fmtRow = (xs: number[]): string[] => (xs.every(Number.isInteger) ? xs.map(String) : xs.map((x) => x.toFixed(2)));
/** The per-layer factor of a stack of depth d: x^(1/d). */
const perLayer = (x: number, d: number): string => `${(x ** (1 / d)).toFixed(3)}×`;

async function amplify(o: Opts): Promise<number> {
  const { attempts, calls, failureRate: p, seed } = o;
  const rows = await amplificationTable({ seed, attempts, calls, failureRate: p, controls: o.controls });
  const figures = [];
  for (const f of SPEC_FIGURES) {
    const r = await simulateAmplification({ seed, attempts: f.attempts, calls: 10 });
    figures.push({ figure: f.label, formula: f.formula, closedForm: r.closedForm, simulated: r.requestsPerCall });
  }
  if (o.json) {
    console.log(JSON.stringify({ seed, attempts, calls, failureRate: p, rows: rows.map(jsonRow), specFigures: figures }, null, 2));
    return 0;
  }
  const depth = attempts.length;
  const uniform = attempts.every((x) => x === attempts[0]);
  const stack = uniform ? `stacks of 1..${depth} layers, ${attempts[0]} attempts each` : `the outermost 1..${depth} layers of ${attempts.join(' × ')} attempts`;
  console.log(`retrysim amplify — seed ${seed}: ${calls} logical calls through ${stack}; backend failure rate ${p}`);
  console.log('');
  const head = ['backend requests per logical call', ...attempts.map((_, i) => `L=${i + 1}`), 'per layer'];
  const closed = attempts.map((_, i) => expectedRequestsPerCall(attempts.slice(0, i + 1), p));
  const closedName = p === 1 ? (uniform ? `closed form ${attempts[0]}^L` : 'closed form ∏ Aᵢ') : 'expected, no control (closed form)';
  const body: Array<Array<string | number>> = [[closedName, ...fmtRow(closed), perLayer(closed[depth - 1]!, depth)]];
  for (const r of rows) body.push([r.control === 'none' ? 'no control (simulated)' : r.name, ...fmtRow(r.cells.map((c) => c.requestsPerCall)), perLayer(r.cells[depth - 1]!.requestsPerCall, depth)]);
  console.log(textTable(head, body));
  if (p < 1) {
    console.log('');
    const sHead = ['logical calls that succeeded', ...attempts.map((_, i) => `L=${i + 1}`)];
    console.log(textTable(sHead, rows.map((r) => [r.name, ...r.cells.map((c) => `${((100 * c.succeeded) / calls).toFixed(1)} %`)])));
  }
  console.log('');
  console.log(textTable(['SPEC §6 figure (backend always fails, no control)', 'closed form', 'simulated'], figures.map((f) => [f.figure, `${f.formula} = ${f.closedForm}`, fmt(f.simulated)])));
  console.log('');
  console.log(note(o));
  return 0;
}

function jsonRow(r: AmplificationRow) {
  return {
    control: r.control,
    name: r.name,
    cells: r.cells.map((c) => ({
      layers: c.layers,
      requestsPerCall: c.requestsPerCall,
      closedForm: c.closedForm,
      backendRequests: c.backendRequests,
      layerRequests: c.layerRequests,
      layerRetries: c.layerRetries,
      succeeded: c.succeeded,
      timeMs: c.timeMs,
    })),
  };
}

/** Greedy word wrap at `width` columns. */
function wrap(text: string, width: number): string {
  const lines: string[] = [];
  let line = '';
  for (const w of text.split(' ')) {
    if (line !== '' && line.length + 1 + w.length > width) {
      lines.push(line);
      line = w;
    } else line = line === '' ? w : `${line} ${w}`;
  }
  if (line !== '') lines.push(line);
  return lines.join('\n');
}

function note(o: Opts): string {
  const d = o.attempts.length;
  return wrap(
    'Without control every layer retries the failures of the layer below, so a failing backend sees ' +
      'A₁·A₂·…·A_L requests per logical call: the load grows with depth exactly when the backend can ' +
      'least take it. With a retry budget each layer retries only while retries stay ≤ 10 % of its ' +
      'requests over the last 10 s, so a layer adds at most 1/(1 − 0.1) ≈ 1.11× and depth costs about ' +
      `1.11^L (${((1 / 0.9) ** d).toFixed(2)}× at ${d} layers) instead of A^L. A token bucket (AWS standard mode: ` +
      '500 tokens, a retry costs 5, a success refunds it) grants at most 100 retries per layer while the ' +
      'backend keeps failing, however many calls share it: at most 100·L/calls extra requests per call ' +
      `(${o.calls} calls here), so it protects more the more traffic there is. Both limits are shared by ` +
      'all calls through a layer, and both give up some successes when failures are only partial.',
    96,
  );
}
