// Alerts on the dashboard, kept pure: an audit row of kind alert said in
// the page's language, and whether the alerts' webhook needs the
// operator's attention. An alert row's reason is the alert's kind
// (threshold, hold, evict, restore) and its detail the gateway's English
// sentence; the figures are read back from that sentence, and a sentence of
// a shape this page does not know is shown as the gateway wrote it.

import type { AuditRow } from './api';
import { units } from './format';
import { t, type Key } from './i18n';
import { microsOf, money } from './money';
import { periodName } from './period';
import type { AlertsState, WebhookState } from './types';

export type AlertKind = 'threshold' | 'hold' | 'evict' | 'restore';
const kinds: readonly AlertKind[] = ['threshold', 'hold', 'evict', 'restore'];

/** AlertText is an alert row in words: its kind's name (null for a kind this page does not know) and its sentence. */
export interface AlertText {
  kind: string | null;
  text: string;
}

const thresholdRe = /^(\d+)% of the (units|money) budget reached: (\S+) of (\S+?)(?: in (\S+))?$/;
const modelRe = /^(\S+) (?:evict|restore)\w*: (.*)$/s;

/** amount is a decimal string of an alert: money in the gateway's currency, else whole units. */
function amount(text: string, inMoney: boolean, currency: string | null): string {
  if (inMoney) {
    const m = microsOf(text);
    return (m !== null && currency && money(m, currency)) || (currency ? `${text} ${currency}` : text);
  }
  const n = Number(text);
  return Number.isSafeInteger(n) ? units(n) : text;
}

/** sentence reads the gateway's sentence of an alert of kind k; null when it is not of the shape this page knows. */
function sentence(k: AlertKind, r: Pick<AuditRow, 'tenant' | 'run' | 'detail'>, currency: string | null): string | null {
  const d = (r.detail ?? '').trim();
  const tenant = r.tenant ?? '';
  if (k === 'threshold') {
    const m = thresholdRe.exec(d);
    if (!m) return null;
    const inMoney = m[2] === 'money';
    return t('alert.threshold', {
      tenant,
      threshold: m[1],
      used: amount(m[3], inMoney, currency),
      budget: amount(m[4], inMoney, currency),
      period: m[5] ? t('alert.inPeriod', { period: periodName(m[5]) }) : '',
    });
  }
  if (k === 'hold') return r.run ? t('alert.hold', { tenant, run: r.run }) : null;
  const m = modelRe.exec(d);
  if (!m) return null;
  return t(k === 'evict' ? 'alert.evict' : 'alert.restore', { model: m[1], reason: m[2] });
}

/** alertText is an alert row in the page's language, else as the gateway wrote it. */
export function alertText(r: Pick<AuditRow, 'reason' | 'evidence' | 'detail' | 'tenant' | 'run'>, currency: string | null): AlertText {
  const k = kinds.find((x) => x === r.reason) ?? null;
  const said = k ? sentence(k, r, currency) : null;
  return {
    kind: k ? t(`alert.kind.${k}` as Key) : null,
    text: said ?? [k ? null : r.reason, r.evidence, r.detail].filter(Boolean).join(' · '),
  };
}

/** webhookTrouble is the webhook when it is failing (its latest attempt did not get a 2xx); null otherwise. */
export function webhookTrouble(a: AlertsState | null | undefined): WebhookState | null {
  const w = a?.webhook;
  return w && w.failing ? w : null;
}
