// Alerts on the dashboard, kept pure: an audit row of kind alert said in
// words, and whether the alerts' webhook needs the operator's attention.
// An alert row carries the webhook's JSON ({"kind","tenant","threshold",
// "period","used","budget","currency","at","run"}) in its detail; a row
// this page cannot read is shown as the server wrote it.

import type { AuditRow } from './api';
import { units } from './format';
import { t } from './i18n';
import { microsOf, money } from './money';
import { periodName } from './period';
import type { AlertsState, WebhookState } from './types';

/** Alert is the webhook's body as the audit row keeps it; fields that do not apply are null. */
export interface Alert {
  kind: string;
  tenant?: string | null;
  threshold?: number | null;
  period?: string | null;
  used?: string | null;
  budget?: string | null;
  currency?: string | null;
  at?: string | null;
  run?: string | null;
}

/** parseAlert reads an alert from text holding its JSON (alone, or after words); null when there is none. */
export function parseAlert(text: string | null | undefined): Alert | null {
  if (!text) return null;
  const i = text.indexOf('{');
  const j = text.lastIndexOf('}');
  if (i < 0 || j <= i) return null;
  try {
    const v: unknown = JSON.parse(text.slice(i, j + 1));
    if (v && typeof v === 'object' && typeof (v as Alert).kind === 'string') return v as Alert;
  } catch {
    // not JSON: the row is shown as written
  }
  return null;
}

/** amount is a decimal string of the alert in its budget's terms: money in its currency, else whole units. */
function amount(text: string | null | undefined, currency: string | null | undefined): string {
  if (!text) return '—';
  if (currency) {
    const m = microsOf(text);
    const s = m === null ? '' : money(m, currency);
    return s || `${text} ${currency}`;
  }
  const n = Number(text);
  return Number.isSafeInteger(n) ? units(n) : text;
}

/** alertSentence says what an alert was about; null when it is not one this page knows. */
export function alertSentence(a: Alert): string | null {
  const tenant = a.tenant ?? '';
  const period = a.period ? t('alert.inPeriod', { period: periodName(a.period) }) : '';
  switch (a.kind) {
    case 'threshold':
      return t('alert.threshold', {
        tenant,
        threshold: a.threshold ?? '?',
        used: amount(a.used, a.currency),
        budget: amount(a.budget, a.currency),
        period,
      });
    case 'hold':
      return t('alert.hold', { tenant, run: a.run ?? '—', period });
    case 'evict':
      return t('alert.evict', { tenant: tenant || '—' });
    case 'restore':
      return t('alert.restore', { tenant: tenant || '—' });
    default:
      return null;
  }
}

/** auditAlertText is an alert row's words: its sentence, else the row's own reason and detail. */
export function auditAlertText(r: Pick<AuditRow, 'kind' | 'reason' | 'evidence' | 'detail'>): string {
  const a = parseAlert(r.detail) ?? parseAlert(r.evidence);
  const said = a ? alertSentence(a) : null;
  return said ?? [r.reason, r.evidence, r.detail].filter(Boolean).join(' · ');
}

/** webhookTrouble is the webhook when it is failing (its latest attempt did not get a 2xx); null otherwise. */
export function webhookTrouble(a: AlertsState | null | undefined): WebhookState | null {
  const w = a?.webhook;
  return w && w.failing ? w : null;
}
