import Table from 'cli-table3';

/** A plain text table (cli-table3) without colours, so output is stable in files and CI logs. */
export function textTable(head: string[], rows: Array<Array<string | number>>): string {
  // No separator lines between body rows: a matrix stays readable at a glance.
  const t = new Table({ head, style: { head: [], border: [] }, chars: { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' } });
  for (const r of rows) t.push(r.map(String));
  return t.toString();
}
