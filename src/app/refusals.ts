/**
 * What a simulated process of a hosted app may not do — use a SQLite file
 * of its own (database-file.ts), open a TCP connection (no-socket.ts) — is
 * refused where the app makes the call, and reported by the host in one
 * line (exit 2) whatever the app does with the exception: a framework that
 * answers 500 would otherwise turn the refusal into a verdict.
 */
let sink: ((text: string) => void) | undefined;

/** Where refusals go: the turn of app code that runs now (set by the host on enter, cleared on leave). */
export function setRefusalSink(s: ((text: string) => void) | undefined): void {
  sink = s;
}

/** Notes a refusal (its one-line text, after `app 'X' <where>: `) for the turn that runs now. */
export function noteRefusal(text: string): void {
  sink?.(text);
}
