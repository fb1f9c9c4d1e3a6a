import { useState } from 'preact/hooks';
import type { Run } from '../lib/types';
import type { Actions, Note as NoteT } from '../lib/store';
import { duration, elapsed, fullTime, time, units } from '../lib/format';
import { t } from '../lib/i18n';
import { RunCells, runColumns } from './RunCells';
import { StatusBadge } from './StatusBadge';
import { TablePanel, type Column } from './TablePanel';
import { Dialog } from './Dialog';
import { Note } from './Note';

const live = new Set(['queued', 'active']);

/** ordered puts active and queued runs first (oldest first), then the rest as sent (newest first). */
export function ordered(runs: Run[]): Run[] {
  const open = runs.filter((r) => live.has(r.status)).sort((a, b) => a.created_at.localeCompare(b.created_at));
  return [...open, ...runs.filter((r) => !live.has(r.status))];
}

export function Runs(props: { runs: Run[]; actions: Actions; busy: ReadonlySet<string>; notes: ReadonlyMap<string, NoteT>; now: Date }) {
  const [asking, setAsking] = useState<Run | null>(null);
  const columns: Column[] = [
    ...runColumns(),
    { label: t('runs.status') },
    { label: t('runs.usage') },
    { label: t('runs.elapsed'), class: 'num' },
    { label: t('runs.streamed'), class: 'num' },
    { label: t('holds.reserve'), class: 'num' },
    { label: t('runs.spent'), class: 'num' },
    { label: t('runs.cached'), class: 'num' },
    { label: t('runs.held'), class: 'num' },
    { label: t('runs.started') },
    { label: '' },
  ];
  return (
    <>
      <TablePanel title={t('runs.title')} note={t('runs.note')} testid="runs-table" columns={columns} empty={t('runs.empty')} isEmpty={props.runs.length === 0}>
        {ordered(props.runs).map((r) => (
          <tr key={r.id} data-testid={`run-row-${r.id}`} class={live.has(r.status) ? 'live' : ''}>
            <RunCells run={r} />
            <td>
              <StatusBadge value={r.status} />
            </td>
            <td>
              <StatusBadge value={r.usage} usage />
            </td>
            <td class="num">{live.has(r.status) ? duration(elapsed(r.created_at, props.now)) : '—'}</td>
            <td class="num">{r.streamed_units === undefined ? '—' : units(r.streamed_units)}</td>
            <td class="num">{units(r.reserve_units)}</td>
            <td class="num">{units(r.spent_units)}</td>
            <td class="num" data-testid={`cached-${r.id}`} title={t('runs.cachedNote')}>
              {r.cached_tokens ? units(r.cached_tokens) : '—'}
            </td>
            <td class="num">{units(r.held_units)}</td>
            <td title={fullTime(r.created_at)}>{time(r.created_at, props.now)}</td>
            <td class="act">
              {live.has(r.status) && (
                <button
                  type="button"
                  class="danger"
                  data-testid={`cancel-${r.id}`}
                  disabled={props.busy.has(`cancel:${r.id}`)}
                  onClick={() => setAsking(r)}
                >
                  {t('runs.cancel')}
                </button>
              )}
              <Note notes={props.notes} scope={`cancel:${r.id}`} actions={props.actions} testid={`notice-cancel-${r.id}`} />
            </td>
          </tr>
        ))}
      </TablePanel>
      {asking && (
        <Dialog title={t('runs.cancel')} onClose={() => setAsking(null)} testid={`cancel-dialog-${asking.id}`}>
          <p>{t('runs.cancelAsk', { run: asking.id, reserve: units(asking.reserve_units) })}</p>
          <div class="buttons">
            <button
              type="button"
              class="danger"
              data-testid={`cancel-confirm-${asking.id}`}
              onClick={() => {
                const id = asking.id;
                setAsking(null);
                void props.actions.cancelRun(id);
              }}
            >
              {t('runs.cancelYes')}
            </button>
            <button type="button" onClick={() => setAsking(null)}>
              {t('runs.cancelNo')}
            </button>
          </div>
        </Dialog>
      )}
    </>
  );
}
