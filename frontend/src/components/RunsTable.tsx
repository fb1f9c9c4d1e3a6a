import type { Run } from '../lib/types';
import type { Actions } from '../lib/store';
import { time, units } from '../lib/format';
import { RunCells, runColumns } from './RunCells';
import { TablePanel, type Column } from './TablePanel';

const cancellable = new Set(['queued', 'active']);

const columns: readonly Column[] = [
  ...runColumns,
  { label: 'reserve', class: 'num' },
  { label: 'spent', class: 'num' },
  { label: 'held', class: 'num' },
  { label: 'started' },
  { label: '' },
];

export function RunsTable(props: { runs: Run[]; actions: Actions; busy: ReadonlySet<string>; now: Date }) {
  return (
    <TablePanel
      title="Recent runs"
      note="newest first"
      testid="runs-table"
      columns={columns}
      empty="No runs yet."
      isEmpty={props.runs.length === 0}
    >
      {props.runs.map((r) => (
        <tr key={r.id} data-testid={`run-row-${r.id}`}>
          <RunCells run={r} />
          <td class="num">{units(r.reserve_units)}</td>
          <td class="num">{units(r.spent_units)}</td>
          <td class="num">{units(r.held_units)}</td>
          <td>{time(r.created_at, props.now)}</td>
          <td class="act">
            {cancellable.has(r.status) && (
              <button
                type="button"
                class="danger"
                data-testid={`cancel-${r.id}`}
                disabled={props.busy.has(`cancel:${r.id}`)}
                onClick={() => void props.actions.cancelRun(r.id)}
              >
                Cancel
              </button>
            )}
          </td>
        </tr>
      ))}
    </TablePanel>
  );
}
