import { describe, expect, it, vi } from 'vitest';
import { run } from './matrix.js';
import { EXPECTED_REPORTS } from '../scenario/canonical.js';

async function matrixJson(): Promise<{ code: number; json: any }> {
  let out = '';
  const log = vi.spyOn(console, 'log').mockImplementation((...a) => void (out += a.join(' ')));
  try {
    const code = await run(['--json']);
    return { code, json: JSON.parse(out) };
  } finally {
    log.mockRestore();
  }
}

/** The course's demo table: reports held per row, in its five columns (SPEC §4, scenarios 1–5). */
const COURSE: Record<string, number[]> = {
  'naive/none': [2, 2, 2, 2, 2],
  'key_atomic/per_attempt': [2, 1, 2, 2, 2],
  'key_split/tool_call': [1, 2, 2, 2, 2],
  'key_atomic/tool_call': [1, 1, 1, 2, 2],
  'key_atomic/business': [1, 1, 1, 1, 2],
};
const COURSE_COLUMNS = ['lost_response', 'crash_mid_request', 'concurrent_duplicate', 'model_new_id', 'model_rewrite_title'];

describe('retrysim matrix', () => {
  it("equals the course's table, cell for cell (25 cells), and says every cell matches", async () => {
    const { code, json } = await matrixJson();
    expect(code).toBe(0);
    for (const [row, cells] of Object.entries(COURSE)) {
      expect(COURSE_COLUMNS.map((c) => json.rows[row][c]), row).toEqual(cells);
    }
    expect(json.mismatches).toBe(0);
    expect(json.expected['naive/none'].model_new_id).toBe(2);
    expect(json.matches['naive/none'].model_new_id).toBe(true);
  });

  it('exits 1 and marks the cell when a cell differs from its expected value', async () => {
    const row = EXPECTED_REPORTS['key_atomic/tool_call']!;
    const saved = row.lost_response;
    row.lost_response = 3; // a wrong claim: the run still holds 1
    try {
      const { code, json } = await matrixJson();
      expect(code).toBe(1);
      expect(json.mismatches).toBe(1);
      expect(json.matches['key_atomic/tool_call'].lost_response).toBe(false);
      expect(json.expected['key_atomic/tool_call'].lost_response).toBe(3);
      expect(json.rows['key_atomic/tool_call'].lost_response).toBe(1);
    } finally {
      row.lost_response = saved;
    }
  });
});
