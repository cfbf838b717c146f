import { errorResponse, jsonResponse, type TrackerResponse } from './messages.js';
import type { ReportRow, Store } from './store.js';

/**
 * The read side: `GET /reports/:id` and `GET /reports?run_id=...` (the model
 * layer's "query before resubmitting"). One read each, no interleaving
 * points. Reads are tenant-scoped like writes: another tenant's report is
 * "not found" (its existence is not revealed either).
 */

/** The public shape of a report. */
export interface ReportView {
  report_id: number;
  run_id: string;
  module: string;
  title: string;
  steps: string;
  created_at: number;
}

function view(r: ReportRow): ReportView {
  return { report_id: r.id, run_id: r.run_id, module: r.module, title: r.title, steps: r.steps, created_at: r.created_at };
}

/** `GET /reports/:id` → 200 with the report, 404, or 400 for a bad id. */
export function getReport(store: Store, idText: string, tenant: string): TrackerResponse {
  if (!/^[1-9][0-9]{0,15}$/.test(idText)) return errorResponse(400, `report id must be a positive integer, got '${idText}'`);
  const row = store.getReport(Number(idText));
  if (!row || row.tenant !== tenant) return errorResponse(404, `report ${idText} not found`);
  return jsonResponse(200, view(row));
}

/** `GET /reports?run_id=...` → 200 `{"reports": [...]}` oldest first; 400 without run_id. */
export function listReports(store: Store, query: URLSearchParams, tenant: string): TrackerResponse {
  const runId = query.get('run_id');
  if (runId === null || runId === '') return errorResponse(400, "query parameter 'run_id' is required");
  return jsonResponse(200, { reports: store.reportsForRun(runId, tenant).map(view) });
}
