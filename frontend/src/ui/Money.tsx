import { money } from '../lib/money';

/** Money is an amount beside its units, muted; nothing without one. */
export function Money(props: { micros: number | undefined; currency: string | null | undefined; testid?: string }) {
  const text = money(props.micros, props.currency);
  if (!text) return null;
  return (
    <span class="money" data-testid={props.testid}>
      {' '}
      {text}
    </span>
  );
}
