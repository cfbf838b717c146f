/**
 * The transport-independent request and response shapes. A transport (the
 * simulated network or node:http) turns its wire format into these and back.
 */

/** One request. Header names are lower-case (`idempotency-key`, `x-tenant`). */
export interface TrackerRequest {
  method: string;
  /** Path with optional query string, e.g. `/reports?run_id=r1`. */
  path: string;
  headers: Record<string, string | undefined>;
  body: string;
}

/** One response. */
export interface TrackerResponse {
  status: number;
  headers: Record<string, string>;
  /** JSON text. */
  body: string;
  /**
   * The work is committed; now close the connection without sending a byte
   * (the lose_response_after_commit fault). The transport must honour it.
   */
  dropConnection?: boolean;
  /** The answer is a stored earlier result (also sent as header `idempotent-replay: true`). */
  replay?: boolean;
}

/** Header that marks a replayed response. */
export const REPLAY_HEADER = 'idempotent-replay';

const JSON_HEADERS = { 'content-type': 'application/json' } as const;

/** A JSON response with the given status. */
export function jsonResponse(status: number, value: unknown, headers: Record<string, string> = {}): TrackerResponse {
  return { status, headers: { ...JSON_HEADERS, ...headers }, body: JSON.stringify(value) };
}

/** An error response, body `{"error": message}`. */
export function errorResponse(status: number, message: string, headers: Record<string, string> = {}): TrackerResponse {
  return jsonResponse(status, { error: message }, headers);
}

/** The success answer to a write: `201 {"report_id": n}`. */
export function createdResponse(reportId: number): TrackerResponse {
  return jsonResponse(201, { report_id: reportId });
}

/** Body text stored for replay of a successful write. */
export function createdBody(reportId: number): string {
  return JSON.stringify({ report_id: reportId });
}

/** A replay of a stored status and body, marked as such. */
export function replayResponse(status: number, body: string): TrackerResponse {
  return { status, headers: { ...JSON_HEADERS, [REPLAY_HEADER]: 'true' }, body, replay: true };
}

/** 422: the key was used before with a different body. */
export function keyReusedResponse(): TrackerResponse {
  return errorResponse(422, "header 'idempotency-key' was already used with a different request body");
}

/** 409: another request holds the key and is still working on it. */
export function inProgressResponse(): TrackerResponse {
  return errorResponse(409, 'a request with this idempotency key is still in progress; retry later');
}
