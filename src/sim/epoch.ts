/**
 * The simulation's wall-clock epoch: kernel time 0 is 2026-01-01T00:00:00Z
 * for the code under test. Real code treats a zero or small timestamp as
 * "unset" (`if (!row.expiresAt)`), ULID and UUIDv7 generators refuse a
 * time at or below 0, and a value stored or captured in 2026 compared with
 * a 1970 `Date.now()` is off by 56 years: a simulated process lives in the
 * present, as its production twin does. Apps have seen it since they were
 * hosted (src/app/instance-clock.ts); a user's service since scenario files
 * carry `service.epochMs` (a file without it replays on epoch 0, as it was
 * found: docs/scenario-files.md).
 */
export const SIM_EPOCH_MS = Date.UTC(2026, 0, 1);
