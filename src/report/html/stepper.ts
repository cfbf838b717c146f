import { clientScript } from './bundle.js';
import { htmlPage } from './page.js';
import { BASE_CSS, STEPPER_CSS } from './styles.js';
import type { StepperData } from './stepper-types.js';

/** One self-contained stepper page for one observed run (see observeScenario). */
export async function stepperPage(data: StepperData): Promise<string> {
  return htmlPage({ title: `retrysim · ${data.name}`, css: BASE_CSS + STEPPER_CSS, data, script: await clientScript('stepper') });
}
