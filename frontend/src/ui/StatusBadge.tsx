import type { RunStatus, UsageStatus } from '../lib/types';
import { t, type Key } from '../lib/i18n';

const tone: Record<string, string> = {
  queued: 'info',
  active: 'info',
  completed: 'ok',
  interrupted: 'warn',
  cancelled: 'muted',
  failed: 'bad',
  pending: 'info',
  trusted: 'ok',
  unknown: 'warn',
  reconciled: 'ok',
  released: 'muted',
};

const usageWords = new Set(['pending', 'trusted', 'unknown', 'reconciled', 'released']);

/** StatusBadge shows a run or usage status in words of the current language; data-value keeps the wire word. */
export function StatusBadge(props: { value: RunStatus | UsageStatus | string; usage?: boolean }) {
  const v = props.value;
  const key = ((props.usage ?? usageWords.has(v)) ? `usage.${v}` : `status.${v}`) as Key;
  return (
    <span class={`badge ${tone[v] ?? 'muted'}`} data-value={v}>
      {t(key)}
    </span>
  );
}
