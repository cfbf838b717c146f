import type { StrategyName } from '../../backoff/strategies.js';

/** What the herd explorer page is generated with (the form's defaults and bounds). */
export interface HerdPageData {
  strategies: StrategyName[];
  defaults: { strategy: StrategyName; clients: number; runs: number; seed: number };
  /** Upper bounds the form accepts (a page must not freeze the browser for minutes). */
  clientsMax: number;
  runsMax: number;
}
