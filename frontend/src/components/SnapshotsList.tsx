import type { Snapshot } from '../lib/types';
import { duration, time, units } from '../lib/format';

export function SnapshotsList(props: { snapshots: Snapshot[]; now: Date }) {
  return (
    <section class="panel">
      <h2>
        Balance snapshots <span class="muted">latest first</span>
      </h2>
      <div class="scroll">
        <table data-testid="snapshots-list">
          <thead>
            <tr>
              <th>synced</th>
              <th>model</th>
              <th class="num">balance</th>
              <th class="num">usage at sync</th>
              <th class="num">limit</th>
              <th class="num">limit v6</th>
              <th class="num">B0 estimate</th>
              <th class="num">lag</th>
              <th>source</th>
            </tr>
          </thead>
          <tbody>
            {props.snapshots.length === 0 && (
              <tr>
                <td colSpan={9} class="empty">
                  No balance syncs yet.
                </td>
              </tr>
            )}
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
          </tbody>
        </table>
      </div>
    </section>
  );
}
