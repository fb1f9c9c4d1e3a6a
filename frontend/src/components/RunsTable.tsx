import type { Run } from '../lib/types';
import type { Actions } from '../lib/store';
import { shortID, time, units } from '../lib/format';
import { StatusBadge } from './StatusBadge';

const cancellable = new Set(['queued', 'active']);

export function RunsTable(props: { runs: Run[]; actions: Actions; busy: ReadonlySet<string>; now: Date }) {
  return (
    <section class="panel">
      <h2>
        Recent runs <span class="muted">newest first</span>
      </h2>
      <div class="scroll">
        <table data-testid="runs-table">
          <thead>
            <tr>
              <th>run</th>
              <th>tenant</th>
              <th>model</th>
              <th>status</th>
              <th>usage</th>
              <th class="num">reserve</th>
              <th class="num">spent</th>
              <th class="num">held</th>
              <th>started</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {props.runs.length === 0 && (
              <tr>
                <td colSpan={10} class="empty">
                  No runs yet.
                </td>
              </tr>
            )}
            {props.runs.map((r) => (
              <tr key={r.id} data-testid={`run-row-${r.id}`}>
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
          </tbody>
        </table>
      </div>
    </section>
  );
}
