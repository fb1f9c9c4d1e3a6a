import type { Run } from '../lib/types';
import { shortID } from '../lib/format';
import { t } from '../lib/i18n';
import type { Column } from './TablePanel';

/** The columns every run table starts with, matching RunCells. */
export function runColumns(): Column[] {
  return [{ label: t('holds.run') }, { label: t('holds.tenant') }, { label: t('holds.model') }, { label: t('holds.door') }];
}

/** door is the protocol a run came in by; older servers only had chat completions. */
export function door(r: Run): string {
  return r.protocol || r.door || 'chat';
}

/** RunCells are the cells that identify a run: id, tenant, model, door. */
export function RunCells(props: { run: Run }) {
  const r = props.run;
  return (
    <>
      <td class="mono" title={r.id}>
        {shortID(r.id)}
      </td>
      <td>{r.tenant}</td>
      <td>
        {r.upstream}/{r.model}
      </td>
      <td>{door(r)}</td>
    </>
  );
}
