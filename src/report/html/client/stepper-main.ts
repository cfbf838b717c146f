import type { StepperData } from '../stepper-types.js';
import { el, markReady, readData, readHash, writeHash } from './dom.js';
import { mountStepper } from './stepper-view.js';

/**
 * The stepper page (`retrysim replay FILE --html OUT.html`): one run. The
 * step is in the URL hash (`#step=12`, counted from 1), so a link points
 * at a moment.
 */
const data = readData<StepperData>();
const app = document.getElementById('app')!;
app.replaceChildren();
const root = el('div');
// check --html's pages link back to their index; a lone `replay --html` page has none to link to.
app.append(el('nav', { class: 'crumb', 'aria-label': 'breadcrumb' }, data.index !== undefined ? el('a', { href: data.index }, '← the index: every verdict and counterexample') : null, data.index !== undefined ? ' · ' : null, 'retrysim · counterexample stepper'), root);
const stepFromHash = (): number => {
  const n = Number(readHash().get('step') ?? '1');
  return Number.isInteger(n) ? n - 1 : 0;
};
const handle = mountStepper(root, data, { start: stepFromHash(), onStep: (i) => writeHash({ step: String(i + 1) }) });
window.addEventListener('hashchange', () => handle.go(stepFromHash()));
markReady();
