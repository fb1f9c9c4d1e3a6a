// What the page reads of the gateway's periods, alerts and clock: small
// selectors over the store's View, and the gateway's "now" for the leaves
// that count down to a period's end. The gateway's clock may be shifted
// (QUOTAGATE_CLOCK_OFFSET) so that a test or a demo crosses a period's end
// within seconds; a countdown by the page's own clock would then be days off.

import { clockOffsetMs, history, type History } from '../lib/period';
import { webhookTrouble } from '../lib/alerts';
import type { AlertsState, WebhookState } from '../lib/types';
import { useNow } from './clock';
import type { View } from './store';
import { useView } from './use';

/** gatewayOffset is the gateway clock's shift from real time, in ms (0 when it is not shifted or unsaid). */
export function gatewayOffset(v: View): number {
  return clockOffsetMs(v.state?.clock);
}

/** historyOf is a tenant's spend over its last periods, oldest first; empty when the state has none. */
export function historyOf(v: View, tenant: string): History {
  return history(v.state?.periods?.[tenant]);
}

/** alertsOf is the alerts' config and delivery; null when alerts are not configured. */
export function alertsOf(v: View): AlertsState | null {
  return v.state?.alerts ?? null;
}

/** failingWebhook is the alerts' webhook when its deliveries are failing. */
export function failingWebhook(v: View): WebhookState | null {
  return webhookTrouble(v.state?.alerts);
}

/** useGatewayNow is the gateway's time in ms: the page's clock moved by the gateway's offset, re-read every everyMs. */
export function useGatewayNow(everyMs = 1000): number {
  const offset = useView(gatewayOffset);
  return useNow(everyMs).getTime() + offset;
}
