// The ticking leaves: each says one instant relative to now and is the only
// thing that re-renders when the clock ticks. The instants are the
// gateway's (run, audit and sync times), so "now" is the gateway's clock,
// which a test or a demo may have shifted (QUOTAGATE_CLOCK_OFFSET); the
// uptime alone counts on the page's own clock from when the state arrived.
import { ago, duration, elapsed, time } from '../lib/format';
import { useNow } from '../state/clock';
import { useGatewayNow } from '../state/gateway';

/** Ago says how long before now an instant was: "12s ago". */
export function Ago(props: { at: string | null | undefined }) {
  return <>{ago(props.at, new Date(useGatewayNow()))}</>;
}

/** Since is the time from an instant to now as a duration: "3m 05s". */
export function Since(props: { at: string | null | undefined }) {
  return <>{duration(elapsed(props.at, new Date(useGatewayNow())))}</>;
}

/** When is an instant's clock time, with its date when it is not today. */
export function When(props: { at: string | null | undefined }) {
  return <>{time(props.at, new Date(useGatewayNow(60_000)))}</>;
}

/** Uptime counts on from the seconds the server reported when its state arrived (receivedAt, local ms). */
export function Uptime(props: { seconds: number | null; receivedAt: number }) {
  const now = useNow().getTime();
  if (props.seconds === null) return <>{duration(null)}</>;
  return <>{duration(props.seconds + Math.max(0, (now - props.receivedAt) / 1000))}</>;
}
