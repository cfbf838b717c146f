import type { Transport } from './transport.js';
import { submitReport, type AttemptRecord, type ClientEnv, type HarnessOptions, type HarnessResult, type ReportIntent } from './client.js';

/** How the model (the caller above the harness) reacts to "outcome unknown". */
export interface ModelOptions {
  /** New tool calls the model makes after an "outcome unknown" result. Default 0. */
  resubmits?: number;
  /** The model rewords the title when it resubmits. Default false. */
  reword?: boolean;
}

/** One logical operation as the model layer saw it. */
export interface OperationResult {
  /** The last tool call's result. */
  final: HarnessResult;
  /** Each tool call's id and result, in order. */
  toolCalls: Array<{ toolUseId: string; title: string; result: HarnessResult }>;
}

/**
 * A deterministic rewording of a title, as a model might produce when it
 * tries again: different words, same bug.
 */
export function rewordTitle(title: string, round: number): string {
  return round === 1 ? `Bug: ${title} (retry)` : `Bug: ${title} (retry ${round})`;
}

/**
 * The model layer of SPEC §4: calls the harness as one tool call; if the
 * harness gives up with "outcome unknown", the model submits again as a new
 * tool call (new tool_use_id), optionally with a reworded title. This is the
 * second retry layer: it multiplies the harness's attempts.
 */
export async function runOperation(
  intent: ReportIntent,
  nextToolUseId: () => string,
  transport: Transport,
  env: ClientEnv,
  harness: HarnessOptions,
  model: ModelOptions,
  log: AttemptRecord[],
): Promise<OperationResult> {
  const toolCalls: OperationResult['toolCalls'] = [];
  const resubmits = model.resubmits ?? 0;
  for (let round = 0; ; round++) {
    const title = round > 0 && model.reword ? rewordTitle(intent.title, round) : intent.title;
    const toolUseId = nextToolUseId();
    const result = await submitReport({ ...intent, title }, toolUseId, transport, env, harness, log);
    toolCalls.push({ toolUseId, title, result });
    if (result.kind !== 'unknown' || round >= resubmits) return { final: result, toolCalls };
  }
}
