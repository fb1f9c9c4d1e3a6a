import type { GateState } from '../../lib/types';
import { count, millis } from '../../lib/format';
import { TablePanel, figures, headings, type Column } from '../../ui/TablePanel';
import { useView } from '../../state/use';
import { KeyPool } from './KeyPool';

const none: GateState[] = [];

export function GatesTable() {
  const gates = useView((v) => v.state?.gates ?? none);
  const pools = useView((v) => v.state?.keys);
  const columns: Column[] = [
    ...headings('gates.upstream'),
    ...figures('gates.inFlight', 'gates.queued', 'gates.maxWait', 'gates.admitted', 'gates.rejected', 'gates.timedOut', 'gates.p95'),
    ...(pools ? headings('keys.label') : []),
  ];
  return (
    <TablePanel words="gates" testid="gates-table" columns={columns} isEmpty={gates.length === 0}>
      {gates.map((g) => (
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
          {pools ? (
            <td>
              <KeyPool upstream={g.upstream} keys={pools[g.upstream]} />
            </td>
          ) : null}
        </tr>
      ))}
    </TablePanel>
  );
}
