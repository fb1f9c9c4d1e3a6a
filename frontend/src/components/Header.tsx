import type { ConnStatus } from '../lib/live';
import type { State } from '../lib/types';
import { duration } from '../lib/format';

export function Header(props: { state: State | null; status: ConnStatus; uptimeSeconds: number | null }) {
  const s = props.state;
  return (
    <header class="top">
      <div class="brand">
        <strong>quotagate</strong>
        <span class="muted" data-testid="version">
          {s?.version ?? '—'}
        </span>
        {s?.demo && (
          <span
            class="badge warn"
            data-testid="demo-badge"
            title="The built-in demo upstream answers with generated text; no provider is called and nothing is billed."
          >
            demo upstream · simulated model
          </span>
        )}
      </div>
      <dl class="facts">
        <div>
          <dt>uptime</dt>
          <dd data-testid="uptime">{duration(props.uptimeSeconds)}</dd>
        </div>
        <div>
          <dt>address</dt>
          <dd data-testid="addr">{s?.addr ?? '—'}</dd>
        </div>
        <div>
          <dt>data dir</dt>
          <dd data-testid="data-dir" class="path" title={s?.data_dir}>
            {s?.data_dir ?? '—'}
          </dd>
        </div>
        <div>
          <dt>meter</dt>
          <dd data-testid="meter">{s?.meter ?? '—'}</dd>
        </div>
      </dl>
      <span class={`conn conn-${props.status}`} title="connection to the quotagate backend">
        <span class="dot" aria-hidden="true" />
        <span data-testid="conn-status">{props.status}</span>
      </span>
    </header>
  );
}
