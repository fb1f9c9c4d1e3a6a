import type { GateState } from '../lib/types';
import { count, millis } from '../lib/format';
import { TablePanel, type Column } from './TablePanel';

const columns: readonly Column[] = [
  { label: 'upstream' },
  { label: 'in flight', class: 'num' },
  { label: 'queued', class: 'num' },
  { label: 'max wait', class: 'num' },
  { label: 'admitted', class: 'num' },
  { label: 'rejected', class: 'num' },
  { label: 'timed out', class: 'num' },
  { label: 'wait p95', class: 'num' },
];

export function GatesTable(props: { gates: GateState[] }) {
  return (
    <TablePanel
      title="Gates"
      note="per-upstream concurrency and wait queue"
      testid="gates-table"
      columns={columns}
      empty="No upstreams."
      isEmpty={props.gates.length === 0}
    >
      {props.gates.map((g) => (
        <tr key={g.upstream} data-testid={`gate-row-${g.upstream}`}>
          <td>{g.upstream}</td>
          <td class={`num ${g.in_flight >= g.max_concurrent && g.max_concurrent > 0 ? 'strong' : ''}`}>
            {count(g.in_flight)} / {count(g.max_concurrent)}
          </td>
          <td class={`num ${g.queued > 0 ? 'strong' : ''}`} data-testid={`gate-${g.upstream}-queued`}>
            {count(g.queued)} / {count(g.max_waiters)}
          </td>
          <td class="num">{millis(g.max_wait_ms)}</td>
          <td class="num">{count(g.admitted)}</td>
          <td class={`num ${g.rejected > 0 ? 'warn-text' : ''}`}>{count(g.rejected)}</td>
          <td class={`num ${g.timed_out > 0 ? 'warn-text' : ''}`}>{count(g.timed_out)}</td>
          <td class="num">{millis(g.wait_p95_ms)}</td>
        </tr>
      ))}
    </TablePanel>
  );
}
