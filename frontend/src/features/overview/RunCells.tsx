import type { Run } from '../../lib/types';
import { shortID } from '../../lib/format';
import { t } from '../../lib/i18n';
import type { Column } from '../../ui/TablePanel';
import { doorText, doorTitle } from '../../lib/runfacts';

/** The columns every run table starts with, matching RunCells. */
export function runColumns(): Column[] {
  return [{ label: t('holds.run') }, { label: t('holds.tenant') }, { label: t('holds.model') }, { label: t('holds.door') }];
}

/** RunCells are the cells that identify a run: id, tenant, model, door (and the protocol when translated). */
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
      <td title={doorTitle(r)} data-testid={`door-${r.id}`}>
        {doorText(r)}
      </td>
    </>
  );
}
