import { useState } from 'preact/hooks';
import type { Run } from '../../lib/types';
import { fullTime, runLabels, units } from '../../lib/format';
import { useStore, useView } from '../../state/use';
import { Since, When } from '../../ui/Ago';
import { t } from '../../lib/i18n';
import { RunCells, runColumns } from './RunCells';
import { StatusBadge } from '../../ui/StatusBadge';
import { TablePanel, figures, headings, type Column } from '../../ui/TablePanel';
import { Dialog } from '../../ui/Dialog';
import { Note } from '../../ui/Note';
import { currencyOf, money } from '../../lib/money';
import { Money } from '../../ui/Money';
import { ListTenant, MoreRows, useRows } from './MoreRows';

const live = new Set(['queued', 'active']);

/** ordered puts active and queued runs first (oldest first), then the rest as sent (newest first). */
export function ordered(runs: Run[]): Run[] {
  const open = runs.filter((r) => live.has(r.status)).sort((a, b) => a.created_at.localeCompare(b.created_at));
  return [...open, ...runs.filter((r) => !live.has(r.status))];
}

/** Runs: the recent runs, live ones first, each cancellable while it runs; older ones a page at a time, one tenant's or everyone's. */
export function Runs() {
  const runs = useRows('runs');
  const busy = useView((v) => v.busy);
  const currency = useView((v) => currencyOf(v.state));
  const labels = runLabels(runs.map((r) => r.id));
  const [asking, setAsking] = useState<Run | null>(null);
  const columns: Column[] = [
    ...runColumns(),
    ...headings('runs.status', 'runs.usage'),
    ...figures('runs.elapsed', 'runs.streamed', 'holds.reserve', 'runs.spent', 'runs.cost', 'runs.cached', 'runs.held'),
    ...headings('runs.started'),
    { label: '' },
  ];
  return (
    <>
      <TablePanel words="runs" testid="runs-table" columns={columns} isEmpty={runs.length === 0}
        tools={<ListTenant kind="runs" />} foot={<MoreRows kind="runs" shown={runs.length} />}>
        {ordered(runs).map((r) => (
          <tr key={r.id} data-testid={`run-row-${r.id}`} class={live.has(r.status) ? 'live' : ''}>
            <RunCells run={r} label={labels.get(r.id)} />
            <td>
              <StatusBadge value={r.status} />
            </td>
            <td>
              <StatusBadge value={r.usage} usage />
            </td>
            <td class="num">{live.has(r.status) ? <Since at={r.created_at} /> : '—'}</td>
            <td class="num">{r.streamed_units === undefined ? '—' : units(r.streamed_units)}</td>
            <td class="num">
              {units(r.reserve_units)}
              <Money micros={r.reserve_micros} currency={currency} testid={`run-reserve-money-${r.id}`} />
            </td>
            <td class="num">{units(r.spent_units)}</td>
            <td class="num" data-testid={`run-cost-${r.id}`} title={r.cost}>
              {money(r.cost_micros, currency) || '—'}
            </td>
            <td class="num" data-testid={`cached-${r.id}`} title={t('runs.cachedNote')}>
              {r.cached_tokens ? units(r.cached_tokens) : '—'}
            </td>
            <td class="num">{units(r.held_units)}</td>
            <td title={fullTime(r.created_at)}><When at={r.created_at} /></td>
            <td class="act">
              {live.has(r.status) && (
                <button
                  type="button"
                  class="danger"
                  data-testid={`cancel-${r.id}`}
                  disabled={busy.has(`cancel:${r.id}`)}
                  onClick={() => setAsking(r)}
                >
                  {t('runs.cancel')}
                </button>
              )}
              <Note scope={`cancel:${r.id}`} testid={`notice-cancel-${r.id}`} />
            </td>
          </tr>
        ))}
      </TablePanel>
      {asking && <CancelDialog run={asking} onClose={() => setAsking(null)} />}
    </>
  );
}

/** CancelDialog asks before cancelling a run, and says its reserve stays held. */
function CancelDialog(props: { run: Run; onClose: () => void }) {
  const store = useStore();
  const r = props.run;
  return (
    <Dialog title={t('runs.cancel')} onClose={props.onClose} testid={`cancel-dialog-${r.id}`}>
      <p>{t('runs.cancelAsk', { run: r.id, reserve: units(r.reserve_units) })}</p>
      <div class="buttons">
        <button
          type="button"
          class="danger"
          data-testid={`cancel-confirm-${r.id}`}
          onClick={() => {
            props.onClose();
            void store.cancelRun(r.id);
          }}
        >
          {t('runs.cancelYes')}
        </button>
        <button type="button" onClick={props.onClose}>
          {t('runs.cancelNo')}
        </button>
      </div>
    </Dialog>
  );
}
