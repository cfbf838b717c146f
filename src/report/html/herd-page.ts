import { clientScript } from './bundle.js';
import { htmlPage } from './page.js';
import { BASE_CSS, HERD_CSS } from './styles.js';
import { DEFAULT_STRATEGIES } from '../../herd/cells.js';
import type { StrategyName } from '../../backoff/strategies.js';
import type { HerdPageData } from './herd-types.js';

/** The herd explorer page; its form starts at these values. */
export async function herdPage(defaults: { strategy: StrategyName; clients: number; runs: number; seed: number }): Promise<string> {
  const data: HerdPageData = {
    strategies: [...DEFAULT_STRATEGIES],
    defaults,
    clientsMax: Math.max(1000, defaults.clients),
    runsMax: Math.max(1000, defaults.runs),
  };
  return htmlPage({ title: 'retrysim · thundering-herd explorer', css: BASE_CSS + HERD_CSS, data, script: await clientScript('herd') });
}
