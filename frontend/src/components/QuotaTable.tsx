import { useState } from 'preact/hooks';
import type { QuotaState } from '../lib/types';
import type { Actions } from '../lib/store';
import { ago, duration, time, units } from '../lib/format';
import { wholeUnits } from '../lib/parse';

const key = (q: QuotaState) => `${q.upstream}/${q.model}`;

export function QuotaTable(props: { quota: QuotaState[]; actions: Actions; busy: ReadonlySet<string>; now: Date }) {
  const [open, setOpen] = useState<string | null>(null);
  return (
    <section class="panel">
      <h2>
        Quota guard <span class="muted">provider free daily quota, per guarded model</span>
      </h2>
      <div class="scroll">
        <table data-testid="quota-table">
          <thead>
            <tr>
              <th>model · day</th>
              <th class="num">usage today</th>
              <th class="num">held in flight</th>
              <th class="num">balance at sync</th>
              <th class="num">B0 estimate</th>
              <th class="num" title="limit in force / v6 snapshot-offset limit">limit / v6</th>
              <th>synced</th>
              <th>state</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {props.quota.length === 0 && (
              <tr>
                <td colSpan={9} class="empty">
                  No guarded models.
                </td>
              </tr>
            )}
            {props.quota.map((q) => {
              const k = key(q);
              const id = `${q.upstream}-${q.model}`;
              return [
                <tr key={k} data-testid={`quota-row-${id}`} class={q.evicted ? 'evicted' : ''}>
                  <td>
                    {k}
                    <div class="muted small">{q.day}</div>
                  </td>
                  <td class="num strong" data-testid={`quota-${id}-usage`}>
                    {units(q.usage_today)}
                  </td>
                  <td class="num">{units(q.held_in_flight)}</td>
                  <td class="num">{units(q.balance_at_sync)}</td>
                  <td class="num">{units(q.b0_estimate)}</td>
                  <td class="num">
                    <span data-testid={`quota-${id}-limit`}>{units(q.limit)}</span>
                    <span class="muted"> / {units(q.limit_v6)}</span>
                  </td>
                  <td title={q.synced_at}>
                    {time(q.synced_at, props.now)}
                    <div class="muted small">
                      {ago(q.synced_at, props.now)} · lag {duration(q.lag_seconds)}
                    </div>
                  </td>
                  <td>
                    {q.evicted ? (
                      <span class="badge bad" data-testid={`quota-${id}-evicted`} title={q.evicted_reason}>
                        evicted
                      </span>
                    ) : (
                      <span class="badge ok">open</span>
                    )}
                  </td>
                  <td class="act stack">
                    <button
                      type="button"
                      data-testid={`sync-${id}`}
                      disabled={props.busy.has(`sync:${k}`)}
                      onClick={() => void props.actions.syncQuota(q.upstream, q.model)}
                    >
                      Sync
                    </button>
                    <button
                      type="button"
                      data-testid={`balance-${id}`}
                      aria-expanded={open === k}
                      onClick={() => setOpen(open === k ? null : k)}
                    >
                      Enter…
                    </button>
                  </td>
                </tr>,
                q.evicted && q.evicted_reason && (
                  <tr key={`${k}-reason`} class="evicted reasonrow">
                    <td colSpan={9} data-testid={`quota-${id}-reason`}>
                      evicted: {q.evicted_reason}
                    </td>
                  </tr>
                ),
                open === k && (
                  <tr key={`${k}-form`} class="formrow">
                    <td colSpan={9}>
                      <BalanceForm
                        q={q}
                        id={id}
                        busy={props.busy.has(`balance:${k}`)}
                        actions={props.actions}
                        onDone={() => setOpen(null)}
                      />
                    </td>
                  </tr>
                ),
              ];
            })}
          </tbody>
        </table>
      </div>
    </section>
  );
}

function BalanceForm(props: { q: QuotaState; id: string; busy: boolean; actions: Actions; onDone: () => void }) {
  const [kind, setKind] = useState<'balance' | 'b0'>('balance');
  const [text, setText] = useState('');
  async function submit(e: Event) {
    e.preventDefault();
    const n = wholeUnits(text);
    if (n === null) {
      props.actions.fail('The reading must be a whole number of 0 or more.');
      return;
    }
    if (await props.actions.setBalance(props.q.upstream, props.q.model, kind, n)) props.onDone();
  }
  return (
    <form class="inline" onSubmit={submit} data-testid={`balance-form-${props.id}`}>
      <label>
        reading
        <select
          value={kind}
          data-testid={`balance-kind-${props.id}`}
          onChange={(e) => setKind((e.target as HTMLSelectElement).value as 'balance' | 'b0')}
        >
          <option value="balance">balance now</option>
          <option value="b0">B0 (today's starting balance, from the console)</option>
        </select>
      </label>
      <label>
        units
        <input
          data-testid={`balance-value-${props.id}`}
          inputMode="numeric"
          placeholder="e.g. 2,242,178"
          value={text}
          onInput={(e) => setText((e.target as HTMLInputElement).value)}
          required
        />
      </label>
      <button type="submit" class="primary" disabled={props.busy} data-testid={`balance-submit-${props.id}`}>
        {props.busy ? 'Saving…' : 'Record'}
      </button>
      <button type="button" onClick={props.onDone}>
        Close
      </button>
    </form>
  );
}
