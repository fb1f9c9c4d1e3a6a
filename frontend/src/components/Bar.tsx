import { fraction, percent, units } from '../lib/format';

/** Bar shows spent and held as parts of a budget. */
export function Bar(props: { spent: number; held: number; budget: number }) {
  const fs = fraction(props.spent, props.budget);
  const fh = Math.min(1 - fs, fraction(props.held, props.budget));
  const title = `spent ${units(props.spent)} (${percent(fs)}), held ${units(props.held)} (${percent(fh)}) of ${units(props.budget)}`;
  return (
    <div class="bar" title={title} role="img" aria-label={title}>
      <span class="bar-spent" style={{ width: `${fs * 100}%` }} />
      <span class="bar-held" style={{ width: `${fh * 100}%` }} />
    </div>
  );
}
