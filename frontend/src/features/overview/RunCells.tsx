import type { Run } from '../../lib/types';
import { headings, type Column } from '../../ui/TablePanel';
import { doorText, doorTitle } from '../../lib/runfacts';
import { attemptsText, attemptsTitle } from '../../lib/routes';
import { RunID } from '../../ui/RunID';

/** The columns every run table starts with, matching RunCells. */
export function runColumns(): Column[] {
  return headings('holds.run', 'holds.tenant', 'holds.model', 'holds.door');
}

/**
 * RunCells are the cells that identify a run: id, tenant, upstream and model
 * (and the attempt, when its call failed over to it), door (and the protocol
 * when translated). label is the id as its table shows it
 * (runLabels over the table's ids).
 */
export function RunCells(props: { run: Run; label?: string }) {
  const r = props.run;
  return (
    <>
      <td class="mono" title={r.id} data-testid={`run-id-${r.id}`}>
        <RunID id={r.id} label={props.label} />
      </td>
      <td>{r.tenant}</td>
      <td>
        {r.upstream}/{r.model}
        {attemptsText(r) && (
          <span class="muted" title={attemptsTitle(r)} data-testid={`attempts-${r.id}`}>
            {' '}
            · {attemptsText(r)}
          </span>
        )}
      </td>
      <td title={doorTitle(r)} data-testid={`door-${r.id}`}>
        {doorText(r)}
      </td>
    </>
  );
}
