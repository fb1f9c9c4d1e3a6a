// A ticking leaf: how long a budget period has to run, by the gateway's clock.
import { timeLeft } from '../lib/period';
import { useGatewayNow } from '../state/gateway';

/** TimeLeft counts down to a period's end: "29d 03h left", then "renewing now". */
export function TimeLeft(props: { end: string | null | undefined; testid?: string }) {
  const text = timeLeft(props.end, useGatewayNow());
  if (!text) return null;
  return <span data-testid={props.testid}>{text}</span>;
}
