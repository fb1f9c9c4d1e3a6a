import { useState } from 'preact/hooks';
import type { QuotaState } from '../lib/types';
import type { Actions } from '../lib/store';
import { ago, duration, time, units } from '../lib/format';
import { wholeUnits } from '../lib/parse';
import { TablePanel, type Column } from './TablePanel';

const key = (q: QuotaState) => `${q.upstream}/${q.model}`;

const columns: readonly Column[] = [
  { label: 'model · day' },
  { label: 'usage today', class: 'num' },
  { label: 'held in flight', class: 'num' },
  { label: 'balance at sync', class: 'num' },
  { label: 'B0 estimate', class: 'num' },
  { label: 'limit / v6', class: 'num', title: 'limit in force / v6 snapshot-offset limit' },
  { label: 'synced' },
  { label: 'state' },
  { label: '' },
];

export function QuotaTable(props: { quota: QuotaState[]; actions: Actions; busy: ReadonlySet<string>; now: Date }) {
  const [open, setOpen] = useState<string | null>(null);
  return (
    <TablePanel
      title="Quota guard"
      note="provider free daily quota, per guarded model"
      testid="quota-table"
      columns={columns}
      empty="No guarded models."
      isEmpty={props.quota.length === 0}
    >
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
              <td colSpan={columns.length} data-testid={`quota-${id}-reason`}>
                evicted: {q.evicted_reason}
              </td>
            </tr>
          ),
          open === k && (
            <tr key={`${k}-form`} class="formrow">
              <td colSpan={columns.length}>
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
    </TablePanel>
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
