import type { Step } from './stepper-types.js';

/*
 * The stepper diagram's row labels, outside ./client (no DOM) so that tests
 * read them as the page draws them.
 */

/** Short label drawn on the diagram for a step; the full sentence is in the text column. */
export function shortLabel(s: Step): string {
  const n = /#\d+/.exec(s.text)?.[0] ?? '';
  switch (s.kind) {
    case 'request': return `${n} POST`;
    case 'phase': {
      const fence = s.dbChange?.join(' ').match(/fence (\d+)/)?.[1];
      return `${n} ${s.event}${s.check ? (s.check.outcome === 'pass' ? ' ✓' : ' ✗') : ''}${fence ? ` f${fence}` : ''}`;
    }
    case 'db': return `${n} ${s.event.replace(/^(?:db|store): /, '')}`;
    case 'answer': return `${n} ${s.event.slice(7)}`;
    case 'lost': return `✕ ${n} lost`;
    case 'delivered': return s.text.includes('not read') ? 'unread answer' : s.text.includes('receives') ? s.text.includes('already timed out') ? 'late answer' : 'answer' : s.text.includes('close') ? 'closed' : s.text.includes('refusal') ? 'refused' : 'end';
    case 'refused': return `${n} refused`;
    case 'timeout': return s.event === 'aborted' ? 'aborted' : 'timeout';
    case 'decision': return `${s.decision?.preempted ? '⚡' : '◆'} ${taskShort(s.decision!.of[s.decision!.chosen]!)}`;
    case 'kill': return '✕ kill -9';
    case 'restart': return '↻ restart';
    case 'killed': return '✝ killed';
    case 'lease': return 'lease over';
    case 'error': return '! threw';
    case 'note': return `${n} ${s.event.split(' ')[0]}`;
    case 'resumed': return `${n} ${s.event} ↻`;
    // A worker's own note (the key-reuse probe's sentence) is named by what comes before its colon: the whole
    // sentence, drawn in a lane's box, ran over the time column (the text column has it in full).
    default: return s.event.startsWith('result') ? s.event.replace('result ', '') : s.event.includes(': ') ? s.event.slice(0, s.event.indexOf(': ')) : s.event;
  }
}

/** A candidate label (`s0/op1.w0#1:check`) as a short task name (`#1`, or the worker's name). */
function taskShort(label: string): string {
  const task = label.slice(0, label.indexOf(':'));
  return /#\d+$/.exec(task)?.[0] ?? task;
}

