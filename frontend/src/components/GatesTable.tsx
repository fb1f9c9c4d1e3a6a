import type { GateState } from '../lib/types';
import { count, millis } from '../lib/format';

export function GatesTable(props: { gates: GateState[] }) {
  return (
    <section class="panel">
      <h2>
        Gates <span class="muted">per-upstream concurrency and wait queue</span>
      </h2>
      <div class="scroll">
        <table data-testid="gates-table">
          <thead>
            <tr>
              <th>upstream</th>
              <th class="num">in flight</th>
              <th class="num">queued</th>
              <th class="num">max wait</th>
              <th class="num">admitted</th>
              <th class="num">rejected</th>
              <th class="num">timed out</th>
              <th class="num">wait p95</th>
            </tr>
          </thead>
          <tbody>
            {props.gates.length === 0 && (
              <tr>
                <td colSpan={8} class="empty">
                  No upstreams.
                </td>
              </tr>
            )}
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
          </tbody>
        </table>
      </div>
    </section>
  );
}
