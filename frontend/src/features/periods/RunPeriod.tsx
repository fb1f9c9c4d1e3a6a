import type { Run } from '../../lib/types';
import { runPeriodNote } from '../../lib/period';

/**
 * RunPeriod says, in the reconcile dialog, which budget period a held run
 * belongs to: the reconcile lands there, and when that period has closed
 * it no longer changes what the tenant has available now. Nothing for a
 * run without a period.
 */
export function RunPeriod(props: { run: Run; current: string | undefined }) {
  const note = runPeriodNote(props.run.period, props.current);
  if (!note) return null;
  const closed = !!props.current && props.run.period !== props.current;
  return (
    <p class={closed ? 'warn-text small' : 'muted small'} data-testid={`reconcile-period-${props.run.id}`} data-period={props.run.period}>
      {note}
    </p>
  );
}
