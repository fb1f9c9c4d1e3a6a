import { useState } from 'preact/hooks';
import type { Run } from '../../lib/types';
import { noteText } from '../../state/notes';
import { useStore, useView } from '../../state/use';
import { fullTime, runLabel, runLabels, units } from '../../lib/format';
import { Since } from '../../ui/Ago';
import { retryGroups, retryText, type RetryGroup } from '../../lib/runfacts';
import { t } from '../../lib/i18n';
import { isHeld, reasonSentence } from '../../lib/reason';
import { check, checkCost, errorField, maxUnits, moneyPreview, preview } from '../../lib/reconcile';
import { currencyOf } from '../../lib/money';
import { Money } from '../../ui/Money';
import { RunCells, runColumns } from './RunCells';
import { TablePanel, figures, headings, type Column } from '../../ui/TablePanel';
import { Dialog } from '../../ui/Dialog';
import { Note } from '../../ui/Note';
import { RunPeriod } from '../periods/RunPeriod';
import { ProviderFinding } from './Finding';
import { ListTenant, MoreRows, useRows } from './MoreRows';

const none: Run[] = [];

/** usePicks is the set of picked run ids, for one bulk reconcile. */
function usePicks() {
  const [picked, setPicked] = useState<ReadonlySet<string>>(new Set());
  return {
    picked,
    toggle(id: string) {
      const n = new Set(picked);
      if (n.has(id)) n.delete(id);
      else n.add(id);
      setPicked(n);
    },
    /** pickAll picks every id, or drops them all when all were picked. */
    pickAll(ids: string[]) {
      const n = new Set(picked);
      const all = ids.every((id) => n.has(id));
      for (const id of ids) {
        if (all) n.delete(id);
        else n.add(id);
      }
      setPicked(n);
    },
    clear: () => setPicked(new Set()),
  };
}

/** Holds: the runs whose usage is unknown, grouped by user call, each reconciled with evidence. */
export function Holds() {
  const held = useRows('holds');
  // the recent runs, to follow a retry chain back to its first attempt
  const recent = useView((v) => v.state?.runs ?? none);
  const notes = useView((v) => v.notes);
  const busy = useView((v) => v.busy);
  const groups = retryGroups(held.filter(isHeld), recent);
  const holds = groups.flatMap((g) => g.runs);
  const labels = runLabels(holds.map((r) => r.id));
  const [open, setOpen] = useState<string[] | null>(null); // run ids of the open dialog
  const [opened, setOpened] = useState(0); // a fresh form each time the dialog opens
  const picks = usePicks();
  const sel = holds.filter((r) => picks.picked.has(r.id)).map((r) => r.id);
  const show = (ids: string[]) => {
    setOpened(opened + 1);
    setOpen(ids);
  };
  const columns: Column[] = [
    { label: '' },
    ...runColumns(),
    ...headings('holds.why'),
    ...figures('holds.reserve', 'holds.age'),
    ...headings('holds.retry'),
    { label: '' },
  ];
  const openRuns = open ? holds.filter((r) => open.includes(r.id)) : [];
  return (
    <>
      <TablePanel
        words="holds"
        testid="holds-table"
        columns={columns}
        isEmpty={holds.length === 0}
        tools={
          <>
            <ListTenant kind="holds" />
            {sel.length > 1 && (
              <button type="button" data-testid="reconcile-bulk" onClick={() => show(sel)}>
                {t('holds.bulk', { n: sel.length })}
              </button>
            )}
          </>
        }
        foot={<MoreRows kind="holds" shown={holds.length} />}
      >
        {groups.map((g) => (
          <HoldGroup key={g.root} g={g} width={columns.length} labels={labels} picks={picks} onReconcile={(id) => show([id])} />
        ))}
      </TablePanel>
      {[...notes].map(([scope, n]) =>
        // a settled hold leaves the table: its success is said under it
        scope.startsWith('dialog:') && n.kind === 'ok' ? (
          <Note key={scope} scope={scope} />
        ) : scope.startsWith('apply:') && n.kind === 'ok' ? (
          <Note key={scope} scope={scope} testid={`applied-${scope.slice('apply:'.length)}`} />
        ) : null,
      )}
      {open && openRuns.length > 0 && (
        <ReconcileDialog
          key={opened}
          runs={openRuns}
          busy={busy.has(openRuns.length === 1 ? `reconcile:${openRuns[0].id}` : 'reconcile:bulk')}
          onClose={() => setOpen(null)}
          onDone={() => {
            setOpen(null);
            picks.clear();
          }}
        />
      )}
    </>
  );
}

/** HoldGroup is one user call's held attempts: a header row when there are several, then a row each. */
function HoldGroup(props: {
  g: RetryGroup;
  width: number; // the table's columns
  labels: ReadonlyMap<string, string>;
  picks: ReturnType<typeof usePicks>;
  onReconcile: (id: string) => void;
}) {
  const { g, picks } = props;
  const currency = useView((v) => currencyOf(v.state));
  return (
    <>
      {g.runs.length > 1 && (
        <tr class="group-row" data-testid={`hold-group-${g.root}`}>
          <td>
            <input
              type="checkbox"
              aria-label={t('holds.selectGroup', { run: g.root })}
              checked={g.runs.every((r) => picks.picked.has(r.id))}
              data-testid={`hold-pick-group-${g.root}`}
              onChange={() => picks.pickAll(g.runs.map((r) => r.id))}
            />
          </td>
          <td colSpan={props.width - 1} class="small">
            {t('holds.group', {
              n: g.runs.length,
              run: runLabel(g.root),
              reserve: units(g.runs.reduce((a, r) => a + r.reserve_units, 0)),
            })}
          </td>
        </tr>
      )}
      {g.runs.map((r) => (
        <tr key={r.id} data-testid={`hold-row-${r.id}`} class={g.runs.length > 1 ? 'in-group' : undefined}>
          <td>
            <input
              type="checkbox"
              aria-label={t('holds.select', { run: r.id })}
              checked={picks.picked.has(r.id)}
              data-testid={`hold-pick-${r.id}`}
              onChange={() => picks.toggle(r.id)}
            />
          </td>
          <RunCells run={r} label={props.labels.get(r.id)} />
          <td class="why" data-testid={`hold-why-${r.id}`}>
            {reasonSentence(r)}
            {r.evidence && <div class="muted small">{t('reason.evidence', { evidence: r.evidence })}</div>}
            <ProviderFinding runID={r.id} />
          </td>
          <td class="num strong">
            {units(r.reserve_units)}
            <Money micros={r.reserve_micros} currency={currency} testid={`hold-reserve-money-${r.id}`} />
          </td>
          <td class="num" title={fullTime(r.updated_at)}>
            <Since at={r.updated_at} />
          </td>
          <td class="small" data-testid={`hold-retry-${r.id}`} title={r.idempotency_key ? t('holds.idemKey', { key: r.idempotency_key }) : undefined}>
            {retryText(r, g) || '—'}
          </td>
          <td class="act">
            <button type="button" data-testid={`reconcile-${r.id}`} onClick={() => props.onReconcile(r.id)}>
              {t('holds.reconcile')}
            </button>
            <Note scope={`reconcile:${r.id}`} testid={`notice-${r.id}`} />
          </td>
        </tr>
      ))}
    </>
  );
}

/**
 * previewSentence says what a reconcile at the typed units would do, before
 * it is confirmed. A hold of a closed period is settled in that period: what
 * the tenant has available now does not move (closed names that period).
 */
function previewSentence(runs: Run[], unitsText: string, max: number, available: number | null, closed: string | null): string {
  const c = check(unitsText, 'x', max);
  if (!('units' in c)) return t('rec.previewEmpty');
  const p = preview(runs, c.units, available);
  if (runs.length !== 1) return t('rec.previewBulk', { spend: units(p.spend), release: units(p.release), n: runs.length });
  if (closed) {
    return t('rec.previewClosed', {
      spend: units(p.spend),
      release: units(p.release),
      period: closed,
      tenant: runs[0].tenant,
      available: available === null ? t('fmt.unknown') : units(available),
    });
  }
  return t('rec.preview', {
    spend: units(p.spend),
    release: units(p.release),
    tenant: runs[0].tenant,
    available: p.available === null ? t('fmt.unknown') : units(p.available),
  });
}

type Field = 'units' | 'evidence' | 'cost';

/**
 * useReconcile is the reconcile form's state: what was typed, the error to
 * show by its field (the form's own check first, else the server's refusal),
 * and submit, which settles one run or each of several.
 */
function useReconcile(runs: Run[], scope: string, onDone: () => void) {
  const store = useStore();
  const [unitsText, setUnits] = useState('');
  const [evidence, setEvidence] = useState('');
  const [costText, setCost] = useState('');
  const [local, setLocal] = useState<{ field: Field; error: string } | null>(null);
  const currency = useView((v) => currencyOf(v.state));
  const max = maxUnits(runs);
  const server = useView((v) => v.notes.get(scope));
  const serverErr = server?.kind === 'error' ? { field: errorField(server.text, server.reason), error: noteText(server) } : null;
  const typed = (set: (v: string) => void) => (e: Event) => {
    set((e.target as HTMLInputElement).value);
    setLocal(null);
  };
  async function submit(e: Event) {
    e.preventDefault();
    const v = check(unitsText, evidence, max);
    if ('error' in v) {
      setLocal(v);
      return;
    }
    // a cost is asked for one run only: each run of a bulk reconcile has its own reserve
    const c = runs.length === 1 ? checkCost(costText, runs[0].reserve_micros, currency) : {};
    if ('error' in c) {
      setLocal(c);
      return;
    }
    setLocal(null);
    const ok =
      runs.length === 1
        ? await store.reconcile(runs[0].id, v.units, v.evidence, scope, c.cost)
        : await store.reconcileMany(runs.map((r) => r.id), v.units, v.evidence, scope);
    if (ok) onDone(); // the success notice stays under the Holds panel, where the row was
  }
  return {
    unitsText,
    evidence,
    costText,
    currency,
    max,
    err: local ?? serverErr,
    onUnits: typed(setUnits),
    onEvidence: typed(setEvidence),
    onCost: typed(setCost),
    submit,
  };
}

function ReconcileDialog(props: { runs: Run[]; busy: boolean; onClose: () => void; onDone: () => void }) {
  const store = useStore();
  const runs = props.runs;
  const one = runs.length === 1 ? runs[0] : null;
  const id = one ? one.id : 'bulk';
  const scope = `dialog:${id}`;
  const f = useReconcile(runs, scope, props.onDone);
  const { unitsText, evidence, max, err, onUnits, onEvidence, submit } = f;
  const tenant = useView((v) => (one ? v.state?.tenants.find((x) => x.tenant === one.tenant) : undefined));
  const closed = one?.period && tenant?.period && one.period !== tenant.period ? one.period : null;
  const previewText = previewSentence(runs, unitsText, max, tenant ? tenant.available_units : null, closed);
  const fieldErr = (f: Field) =>
    err?.field === f ? (
      <span class="field-error" role="alert" data-testid={`reconcile-error-${f}-${id}`}>
        {err.error}
      </span>
    ) : null;
  const close = () => {
    store.dismiss(scope);
    props.onClose();
  };
  return (
    <Dialog title={one ? t('rec.title', { run: one.id }) : t('rec.titleBulk', { n: runs.length })} onClose={close} testid={`reconcile-dialog-${id}`}>
      <form class="stacked" onSubmit={submit} data-testid={`reconcile-form-${id}`} noValidate>
        {one && <p class="muted small">{reasonSentence(one)}</p>}
        {one && <RunPeriod run={one} current={tenant?.period} />}
        <label>
          {one ? t('rec.units', { max: units(max) }) : t('rec.unitsBulk', { max: units(max) })}
          <input
            data-testid={`reconcile-units-${id}`}
            inputMode="numeric"
            placeholder={`0 … ${units(max)}`}
            value={unitsText}
            aria-invalid={err?.field === 'units'}
            onInput={onUnits}
          />
          {fieldErr('units')}
        </label>
        <label>
          {t('rec.evidence')}
          <textarea
            data-testid={`reconcile-evidence-${id}`}
            placeholder={t('rec.evidenceHint')}
            value={evidence}
            rows={2}
            aria-invalid={err?.field === 'evidence'}
            onInput={onEvidence}
          />
          {fieldErr('evidence')}
        </label>
        {one && <CostField run={one} f={f} error={fieldErr('cost')} />}
        <p class="preview" data-testid={`reconcile-preview-${id}`}>
          {previewText}
        </p>
        <div class="buttons">
          <button type="submit" class="primary" disabled={props.busy} data-testid={`reconcile-submit-${id}`}>
            {props.busy ? t('rec.saving') : t('rec.confirm')}
          </button>
          <button type="button" onClick={close}>
            {t('rec.cancel')}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/**
 * CostField is the optional provider's bill in money, shown when the run has
 * a reserve in money; its preview says the reserve in money and, once a cost
 * is typed, what is charged and given back.
 */
function CostField(props: { run: Run; f: ReturnType<typeof useReconcile>; error: preact.ComponentChildren }) {
  const { run, f } = props;
  const p = moneyPreview(run, f.costText, f.currency);
  if (!p) return null;
  return (
    <label>
      {t('rec.cost', { currency: f.currency ?? '' })}
      <input
        data-testid={`reconcile-cost-${run.id}`}
        inputMode="decimal"
        placeholder={t('rec.costHint')}
        value={f.costText}
        aria-invalid={f.err?.field === 'cost'}
        onInput={f.onCost}
      />
      {props.error}
      <span class="muted small" data-testid={`reconcile-money-${run.id}`}>
        {p.charge !== null && p.release !== null
          ? t('rec.moneyPreview', { reserve: p.reserve, charge: p.charge, release: p.release })
          : t('rec.moneyReserve', { reserve: p.reserve })}
      </span>
    </label>
  );
}
