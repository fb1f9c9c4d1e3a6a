import type { Run } from '../lib/types';
import { shortID } from '../lib/format';
import { StatusBadge } from './StatusBadge';
import type { Column } from './TablePanel';

/** The columns every run table starts with, matching RunCells. */
export const runColumns: readonly Column[] = [
  { label: 'run' },
  { label: 'tenant' },
  { label: 'model' },
  { label: 'status' },
  { label: 'usage' },
];

/** RunCells are the cells that identify a run: id, tenant, model, status, usage. */
export function RunCells(props: { run: Run }) {
  const r = props.run;
  return (
    <>
      <td class="mono" title={r.id}>
        {shortID(r.id)}
      </td>
      <td>{r.tenant}</td>
      <td>
        {r.upstream}/{r.model}
      </td>
      <td>
        <StatusBadge value={r.status} />
      </td>
      <td>
        <StatusBadge value={r.usage} />
      </td>
    </>
  );
}
