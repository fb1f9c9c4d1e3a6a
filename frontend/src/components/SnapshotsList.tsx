import type { Snapshot } from '../lib/types';
import { duration, time, units } from '../lib/format';
import { TablePanel, type Column } from './TablePanel';

const columns: readonly Column[] = [
  { label: 'synced' },
  { label: 'model' },
  { label: 'balance', class: 'num' },
  { label: 'usage at sync', class: 'num' },
  { label: 'limit', class: 'num' },
  { label: 'limit v6', class: 'num' },
  { label: 'B0 estimate', class: 'num' },
  { label: 'lag', class: 'num' },
  { label: 'source' },
];

export function SnapshotsList(props: { snapshots: Snapshot[]; now: Date }) {
  return (
    <TablePanel
      title="Balance snapshots"
      note="latest first"
      testid="snapshots-list"
      columns={columns}
      empty="No balance syncs yet."
      isEmpty={props.snapshots.length === 0}
    >
      {props.snapshots.map((s) => (
        <tr key={s.id} data-testid={`snapshot-row-${s.id}`} title={s.detail}>
          <td>{time(s.synced_at, props.now)}</td>
          <td>
            {s.upstream}/{s.model}
          </td>
          <td class="num">{units(s.balance_at_sync)}</td>
          <td class="num">{units(s.usage_at_sync)}</td>
          <td class="num">{units(s.limit)}</td>
          <td class="num">{units(s.limit_v6)}</td>
          <td class="num">{units(s.b0_estimate)}</td>
          <td class="num">{duration(s.lag_seconds)}</td>
          <td>{s.source}</td>
        </tr>
      ))}
    </TablePanel>
  );
}
