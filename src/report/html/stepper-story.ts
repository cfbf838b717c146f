import type { Step, ViolationAt } from './stepper-types.js';
import { plural } from '../../service/noun.js';
import { effectsAdded } from '../../net/sim-network.js';
import { KEY_REUSE_PROBE } from '../../scenario/workers.js';

/**
 * The stepper's two-sentence summary, written from the run's own steps:
 * which request added the first effect and what interrupted it, then which
 * request added the next one and what it found on the way. Every word about
 * the service comes from the run — its step names as the trace logs them,
 * the lookups' findings, the service's effect noun — so the same code tells
 * the story of any variant or any user's service; nothing is written per
 * variant.
 */
export function summarize(run: { steps: readonly Step[]; violations: readonly ViolationAt[]; noun: string; reports: Record<string, number> }): string[] {
  const { steps, violations, noun } = run;
  const effects = steps.flatMap((s, i) => (added(s) ? [i] : []));
  const dup = violations.find((v) => v.invariant === 'exactly-one' && effects.filter((i) => i <= v.step).length >= 2);
  if (dup !== undefined) {
    const mine = effects.filter((i) => i <= dup.step);
    const second = mine[mine.length - 1]!;
    const first = mine[mine.length - 2]!;
    const a = steps[first]!.actor;
    const b = steps[second]!.actor;
    if (a !== b) {
      const did = doings(steps, a, 0, first);
      const sa = `${name(a)} ${did.length > 0 ? `ran ${list(did)}, adding ${an(noun)}` : `added ${an(noun)}`}${fate(steps, a, b, first, second)}.`;
      // A retry under another key (a new key per attempt, a resubmission as a new operation) is the
      // reason the key lookup found nothing: the sentence must say so, or the reader blames the lookup.
      const ka = keyOf(steps, a);
      const kb = keyOf(steps, b);
      const rekeyed = ka !== undefined && kb !== undefined && ka !== kb ? ` under another key (${kb}, where ${name(a)} had ${ka})` : '';
      const intro = preemptedIn(steps, a, b, first, second)
        ? `${name(b)} ran in its place`
        : sameWorker(a, b) && sentAt(steps, b) < sentAt(steps, a)
          // The second effect came from the worker's earlier request (held by a pause or a slow step), not from a
          // retry: "The client retried as #1" told the order backwards.
          ? `${name(b)}, sent before it, went on${gaveUpOn(steps, b, a) ? ` (the client had given up waiting for it and sent ${name(a)})` : ''}${rekeyed}`
        : sameWorker(a, b) && probed(steps, b)
          // The key-reuse probe's request is no retry: the same key with another body, which must be refused.
          ? `The client sent the key again with another body as ${name(b)} (the key-reuse probe), where a refusal was due`
        : sameWorker(a, b)
          ? rekeyed !== '' ? `The client sent it again as ${name(b)}${rekeyed}` : `The client retried as ${name(b)}`
          : `${name(b)}, from another worker, went on${rekeyed}`;
      // What a third request wrote between the two (a crash that released the key): the reason b found the key free.
      const third = othersWrites(steps, a, b, first, second);
      const sbIntro = third.length > 0 ? `${intro} (after ${list(third)})` : intro;
      const earlier = doings(steps, b, 0, first);
      const later = doings(steps, b, first + 1, second);
      // A pause at a step stalls the request where it reaches the step, before that step's work: paused at
      // claim before the first effect, its claim ran after the pause ("it had run claim (paused …) before
      // that" told a reader the claim was taken before the other request's effect, which hid a key's expiry).
      const m = earlier.length > 0 ? /^(.+) \(paused (\d+) ms at step '([^']+)'\)$/.exec(earlier[earlier.length - 1]!) : null;
      const paused = m !== null && m[1] === m[3] ? { step: m[1]!, ms: m[2]! } : undefined;
      if (paused !== undefined) {
        earlier.pop();
        // A held store command already says itself ("kv.set (after the wait)"); a step's work is named once.
        if (!(later[0] ?? '').startsWith(`${paused.step} (after the wait)`)) later.unshift(paused.step);
      }
      const then = later.length > 0 ? `${list(later)} added a second ${noun}` : `it added a second ${noun}`;
      const before = [...(earlier.length > 0 ? [`it had run ${list(earlier)}`] : []), ...(paused !== undefined ? [`it was paused ${paused.ms} ms where it reached ${paused.step}`] : [])];
      const sb = `${sbIntro}: ${before.length > 0 ? `${before.join(' and ')} before that, then ${then}` : then}, so ${dup.invariant} breaks (${dup.detail}).`;
      return [sa, sb];
    }
  }
  // The break that comes first is the cause a reader looks for; the later ones follow from it.
  const v = [...violations].sort((x, y) => x.step - y.step)[0];
  if (v !== undefined) {
    const lead = storyOfRequests(steps, noun, v.step);
    return [lead === '' ? `${cap(v.why)}.` : `${lead}.`, `${v.invariant} breaks at step ${v.step + 1}: ${v.why}.`];
  }
  const held = Object.entries(run.reports).map(([op, n]) => `${op} holds ${n} ${n === 1 ? noun : plural(noun)}`).join(', ');
  const lead = storyOfRequests(steps, noun, steps.length - 1);
  return [lead === '' ? 'No request was sent.' : `${lead}.`, `Every invariant holds in this run${held ? `: ${held}` : ''}.`];
}

const REQUEST = /^s\d+\/(.+)#(\d+)$/;

function name(actor: string): string {
  const m = REQUEST.exec(actor);
  return m ? `#${m[2]}` : actor;
}

/** Whether request `b` is the key-reuse probe's: its worker's step just before it is the probe's note. */
function probed(steps: readonly Step[], b: string): boolean {
  const worker = REQUEST.exec(b)?.[1];
  const first = steps.findIndex((s) => s.actor === b);
  for (let i = first - 1; i >= 0; i--) {
    const s = steps[i]!;
    if (s.actor === worker) return s.event.startsWith(KEY_REUSE_PROBE);
    if (REQUEST.exec(s.actor)?.[1] === worker && s.kind === 'request') return false;
  }
  return false;
}

function sameWorker(a: string, b: string): boolean {
  return REQUEST.exec(a)?.[1] === REQUEST.exec(b)?.[1];
}

/** The key a request's lookup used, when the run records one (the built-in tracker's key-table variants). */
function keyOf(steps: readonly Step[], actor: string): string | undefined {
  return steps.find((s) => s.actor === actor && s.check !== undefined)?.check!.key;
}

/** `a report`, `an effect`. */
function an(noun: string): string {
  return `${/^[aeiou]/.test(noun) ? 'an' : 'a'} ${noun}`;
}

function cap(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** A step that added effects: the network's `db: +N <noun>` line (an app's `store: +N <noun>`), whatever the noun. */
function added(s: Step): boolean {
  return s.kind === 'db' && effectsAdded(s.event) !== undefined;
}

/** What a request did between steps `from` and `to` (inclusive): its steps in order, with what each lookup found. */
function doings(steps: readonly Step[], actor: string, from: number, to: number): string[] {
  const parts: string[] = [];
  // The step a note is about, by its name (a note says `kv.set: answer lost`, the story says `SET NX lock`).
  let last = { event: '', said: '' };
  for (let i = from; i <= to; i++) {
    const s = steps[i]!;
    if (s.actor !== actor) continue;
    if (s.kind === 'phase') {
      last = { event: s.event, said: s.command ?? s.event };
      parts.push(`${last.said}${s.check ? ` (the key was ${s.check.found})` : ''}`);
    }
    // A line the simulation adds (a pause, a slow step) says what happened to the step before it.
    else if (s.kind === 'note') {
      if (announcesNext(steps, i, to)) continue;
      // A command a pause or slow fault held says its answer on a line of its own, when it ran: the same
      // command, not another one. Printed whole it read "then kv.set order:1 "{…" → OK added a second order".
      const held = heldAnswer(steps, i);
      if (held !== undefined) {
        if (parts.length === 0) parts.push(`${held} (after the wait)`);
        continue;
      }
      const prev = parts.pop();
      // A pause at a store step is told at the command ("paused 10000 ms at step 'SET order'"), as the story names it.
      const note = last.said === last.event ? s.event : s.event.replace(`at step '${last.event}'`, `at step '${last.said}'`);
      parts.push(prev === undefined ? note : `${prev} (${about(last.event, note)})`);
    }
    // A task resumed before it logged any step wrote from its handler's start (a claim made before its first sim.step).
    else if (s.kind === 'resumed') parts.push(`${s.event === 'resumed' ? 'a write before its first step' : `resumed its ${s.event}`} (${s.dbChange?.join('; ') ?? 'a write'})`);
  }
  return parts;
}

/**
 * "crash at 'kv.set: answer lost' (its 2nd reach …)" followed by the line
 * saying what that crash did ("kv.set: answer lost (the store ran it; …)"):
 * the second says it all, and both in brackets read as a stutter.
 */
function announcesNext(steps: readonly Step[], i: number, to: number): boolean {
  const m = /^crash at '([^']+)'/.exec(steps[i]!.event);
  if (m === null) return false;
  for (let j = i + 1; j <= to; j++) {
    const n = steps[j]!;
    if (n.actor !== steps[i]!.actor) continue;
    return n.kind === 'note' && n.event.startsWith(m[1]!);
  }
  return false;
}

/**
 * The step whose answer note `steps[i]` is (`kv.set order:1 "…" → OK`,
 * logged when a held command ran), or undefined: the note starts with the
 * name of its actor's last step before it and says an answer.
 */
function heldAnswer(steps: readonly Step[], i: number): string | undefined {
  const note = steps[i]!;
  if (!note.event.includes(' → ')) return undefined;
  for (let j = i - 1; j >= 0; j--) {
    const s = steps[j]!;
    if (s.actor !== note.actor || s.kind !== 'phase') continue;
    return note.event.startsWith(`${s.event} `) ? s.command ?? s.event : undefined;
  }
  return undefined;
}

/** A note about step `prev`, without repeating its name: "kv.set: answer lost (the store ran it; …)" is "answer lost: the store ran it; …". */
function about(prev: string, note: string): string {
  if (!note.startsWith(`${prev}: `)) return note;
  const rest = note.slice(prev.length + 2);
  const m = /^(.*?) \((.*)\)$/.exec(rest);
  return m === null ? rest : `${m[1]}: ${m[2]}`;
}

/** `a, b and c`. */
function list(xs: readonly string[]): string {
  return xs.length <= 1 ? xs.join('') : `${xs.slice(0, -1).join(', ')} and ${xs[xs.length - 1]}`;
}

/** What stopped request `a` after its effect, before `b` added the next one (the first of each kind, the likeliest cause first). */
function fate(steps: readonly Step[], a: string, b: string, from: number, to: number): string {
  const seen = new Map<string, string>();
  const worker = REQUEST.exec(a)?.[1];
  for (let i = from + 1; i <= to; i++) {
    const s = steps[i]!;
    const say = (k: string, text: string) => { if (!seen.has(k)) seen.set(k, text); };
    if (s.kind === 'decision' && s.decision?.preempted && s.decision.of[0]!.startsWith(`${a}:`)) say('preempted', `, but had not yet run ${s.decision.of[0]!.slice(a.length + 1)} when the scheduler preempted it`);
    else if (s.kind === 'timeout' && s.actor === worker && sameWorker(a, b)) say('timeout', ', but its client gave up waiting for the answer');
    else if (s.actor !== a) continue;
    else if (s.kind === 'lost') say('lost', ', but its answer was lost on the way back');
    else if (s.kind === 'killed') say('killed', ', but it died with its server before answering');
    else if (s.kind === 'note') say('note', `, then ${s.event}`);
    else if (s.kind === 'answer') say('answer', `, and answered ${s.event.replace(/^answer /, '')}`);
  }
  const kind = ['preempted', 'lost', 'killed', 'timeout', 'note', 'answer'].find((k) => seen.has(k));
  const answered = seen.get('answer');
  // What `a` still wrote after its effect and before it answered (a DEL that frees the key after a lost
  // answer): the reason the next request found the key free is often one of these.
  const after = kind === 'preempted' ? '' : stepsAfter(steps, a, from, to);
  // "answered 201, but its answer was lost": the status is part of the story.
  if ((kind === 'lost' || kind === 'timeout') && answered !== undefined) return `${after}${answered}${seen.get(kind)!}`;
  return kind === undefined ? after : `${after}${seen.get(kind)!}`;
}

/** `, then ran DEL lock` (a hosted app's command; a service's step by its name) for the writing steps `a` ran after step `from` and before its answer (or step `to`); '' for none. */
function stepsAfter(steps: readonly Step[], a: string, from: number, to: number): string {
  const ran: string[] = [];
  for (let i = from + 1; i <= to; i++) {
    const s = steps[i]!;
    if (s.actor !== a) continue;
    if (['answer', 'lost', 'killed'].includes(s.kind)) break;
    // Only writes: a step that changed nothing (the tracker's respond) explains nothing.
    if (s.kind === 'phase' && (s.dbChange?.length ?? 0) > 0) ran.push(s.command ?? s.event);
  }
  return ran.length === 0 ? '' : `, then ran ${list(ran)}`;
}

/**
 * The writes of requests other than `a` and `b` after step `from` and before
 * `b`'s next step (`#1's crash at 'after-process' [− key k (placeholder released)]`):
 * effects excepted, they are told by the sentences themselves.
 */
function othersWrites(steps: readonly Step[], a: string, b: string, from: number, to: number): string[] {
  const out: string[] = [];
  for (let i = from + 1; i < to; i++) {
    const s = steps[i]!;
    if (s.actor === b && s.kind !== 'request') break;
    if (s.actor === a || s.actor === b || !REQUEST.test(s.actor) || s.kind === 'db' || (s.dbChange?.length ?? 0) === 0) continue;
    out.push(`${name(s.actor)}'s ${s.event} [${s.dbChange!.join('; ')}]`);
  }
  return out;
}

/** The step at which request `actor` was sent (-1: none). */
function sentAt(steps: readonly Step[], actor: string): number {
  return steps.findIndex((s) => s.actor === actor && s.kind === 'request');
}

/** Whether the client timed out between sending `earlier` and sending `later` (its worker's timeout step). */
function gaveUpOn(steps: readonly Step[], earlier: string, later: string): boolean {
  const worker = REQUEST.exec(earlier)?.[1];
  return steps.some((s, i) => s.kind === 'timeout' && s.actor === worker && i > sentAt(steps, earlier) && i < sentAt(steps, later));
}

function preemptedIn(steps: readonly Step[], a: string, b: string, from: number, to: number): boolean {
  return steps.some((s, i) => i > from && i <= to && s.decision?.preempted === true && s.decision.of[0]!.startsWith(`${a}:`) && s.decision.of[s.decision.chosen]!.startsWith(`${b}:`));
}

/** Up to three requests in one sentence, each with what it did and how it ended (for runs without a second effect). */
function storyOfRequests(steps: readonly Step[], noun: string, upTo: number): string {
  // In the order the requests first ran on a server (a request sent first may run second).
  const sent = [...new Set(steps.slice(0, upTo + 1).filter((s) => s.kind === 'request').map((s) => s.actor))];
  // Each actor's first step that is not its request, found in one pass (a search per request was quadratic).
  const first = new Map<string, number>();
  steps.forEach((s, j) => {
    if (j <= upTo && s.kind !== 'request' && !first.has(s.actor)) first.set(s.actor, j);
  });
  const ranAt = (a: string) => first.get(a) ?? Number.MAX_SAFE_INTEGER;
  const actors = sent.map((a, i) => ({ a, i, at: ranAt(a) })).sort((x, y) => x.at - y.at || x.i - y.i).map((x) => x.a);
  const told = actors.slice(0, 3).map((a) => {
    let end = upTo;
    for (let i = upTo; i >= 0; i--) if (steps[i]!.actor === a) { end = i; break; }
    const ending = steps.slice(0, end + 1).filter((s) => s.actor === a && ['lost', 'killed', 'answer', 'refused'].includes(s.kind)).pop();
    // An answer that came after the client's timeout reached no one waiting: "answered 500" alone read as the client's outcome.
    const late = steps.some((s) => s.actor === a && s.kind === 'delivered' && s.text.endsWith('(the client had already timed out)'));
    const how = ending === undefined ? '' : ending.kind === 'lost' ? ', but its answer was lost' : ending.kind === 'killed' ? ', but it died with its server' : ending.kind === 'refused' ? '' : `, and answered ${ending.event.replace(/^answer /, '')}${late ? ' after its client had given up waiting' : ''}`;
    const did = doings(steps, a, 0, end);
    const effect = steps.slice(0, end + 1).some((s) => s.actor === a && added(s)) ? ` (adding ${an(noun)})` : '';
    return `${name(a)} ${ending?.kind === 'refused' ? 'was refused (its server was down)' : did.length > 0 ? `ran ${list(did)}${effect}` : 'was sent'}${how}`;
  });
  const more = actors.length > 3 ? `; ${actors.length - 3} more request(s) followed` : '';
  return told.join('; ') + more;
}
