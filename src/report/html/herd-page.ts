import { clientScript } from './bundle.js';
import { htmlPage } from './page.js';
import { BASE_CSS, HERD_CSS } from './styles.js';
import { DEFAULT_STRATEGIES } from '../../herd/cells.js';
import type { StrategyName } from '../../backoff/strategies.js';
import type { HerdPageData } from './herd-types.js';
import { CLIENTS_MAX, EVENTS_MAX } from '../../cli/herd.js';

/** The herd explorer page; its form starts at these values. */
export async function herdPage(defaults: { strategy: StrategyName; clients: number; runs: number; seed: number }): Promise<string> {
  const data: HerdPageData = {
    strategies: [...DEFAULT_STRATEGIES],
    defaults,
    // The CLI's own limits: a page must refuse what `retrysim herd` refuses, and accept what it accepts.
    clientsMax: CLIENTS_MAX,
    runsMax: 100_000,
    eventsMax: EVENTS_MAX,
    // Opens drawing the AWS article's picture at a size that takes about a second in a browser.
    sweep: { from: 10, to: 100, step: 10, runs: 20 },
  };
  return htmlPage({ title: 'retrysim · thundering-herd explorer', css: BASE_CSS + HERD_CSS, data, script: await clientScript('herd') });
}
