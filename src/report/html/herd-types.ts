import type { StrategyName } from '../../backoff/strategies.js';

/** What the herd explorer page is generated with (the form's defaults and bounds). */
export interface HerdPageData {
  strategies: StrategyName[];
  defaults: { strategy: StrategyName; clients: number; runs: number; seed: number };
  /** Upper bounds the form accepts (a page must not freeze the browser for minutes). */
  clientsMax: number;
  runsMax: number;
  /** The CLI's limit on a command's estimated kernel events (runs × strategies × Σ (c² + 4c)), enforced in the page too. */
  eventsMax: number;
  /** The sweep the page opens with (client counts from..to by step, every strategy). */
  sweep: { from: number; to: number; step: number; runs: number };
}
