import { useState } from 'preact/hooks';
import type { Run } from '../lib/types';
import type { Actions } from '../lib/store';
import { time, units } from '../lib/format';
import { wholeUnits } from '../lib/parse';
import { RunCells, runColumns } from './RunCells';
import { TablePanel, type Column } from './TablePanel';

const columns: readonly Column[] = [
  ...runColumns,
  { label: 'held', class: 'num' },
  { label: 'updated' },
  { label: '' },
];

export function HoldsTable(props: { holds: Run[]; actions: Actions; busy: ReadonlySet<string>; now: Date }) {
  const [open, setOpen] = useState<string | null>(null);
  return (
    <TablePanel
      title="Holds"
      note="runs whose usage is pending or unknown"
      testid="holds-table"
      columns={columns}
      empty="Nothing held."
      isEmpty={props.holds.length === 0}
    >
      {props.holds.map((r) => [
        <tr key={r.id} data-testid={`hold-row-${r.id}`}>
          <RunCells run={r} />
          <td class="num strong">{units(r.held_units)}</td>
          <td>{time(r.updated_at, props.now)}</td>
          <td class="act">
            <button
              type="button"
              data-testid={`reconcile-${r.id}`}
              aria-expanded={open === r.id}
              onClick={() => setOpen(open === r.id ? null : r.id)}
            >
              Reconcile
            </button>
          </td>
        </tr>,
        open === r.id && (
          <tr key={`${r.id}-form`} class="formrow">
            <td colSpan={columns.length}>
              <ReconcileForm
                run={r}
                busy={props.busy.has(`reconcile:${r.id}`)}
                actions={props.actions}
                onDone={() => setOpen(null)}
              />
            </td>
          </tr>
        ),
      ])}
    </TablePanel>
  );
}

function ReconcileForm(props: { run: Run; busy: boolean; actions: Actions; onDone: () => void }) {
  const r = props.run;
  const [unitsText, setUnits] = useState('');
  const [evidence, setEvidence] = useState('');
  async function submit(e: Event) {
    e.preventDefault();
    const n = wholeUnits(unitsText);
    if (n === null) {
      props.actions.fail('Units must be a whole number of 0 or more.');
      return;
    }
    if (evidence.trim() === '') {
      props.actions.fail('Write the evidence (provider bill, console figure) for this reconcile.');
      return;
    }
    if (await props.actions.reconcile(r.id, n, evidence.trim())) props.onDone();
  }
  return (
    <form class="inline" onSubmit={submit} data-testid={`reconcile-form-${r.id}`}>
      <label>
        units spent
        <input
          data-testid={`reconcile-units-${r.id}`}
          inputMode="numeric"
          placeholder={`0 … ${units(r.reserve_units)}`}
          value={unitsText}
          onInput={(e) => setUnits((e.target as HTMLInputElement).value)}
          required
        />
      </label>
      <label class="grow">
        evidence
        <input
          data-testid={`reconcile-evidence-${r.id}`}
          placeholder="e.g. provider console shows 1,234 tokens for this request"
          value={evidence}
          onInput={(e) => setEvidence((e.target as HTMLInputElement).value)}
          required
        />
      </label>
      <button type="submit" class="primary" disabled={props.busy} data-testid={`reconcile-submit-${r.id}`}>
        {props.busy ? 'Saving…' : 'Settle'}
      </button>
      <button type="button" onClick={props.onDone}>
        Close
      </button>
    </form>
  );
}
