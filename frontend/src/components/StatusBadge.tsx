import type { RunStatus, UsageStatus } from '../lib/types';

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

export function StatusBadge(props: { value: RunStatus | UsageStatus | string }) {
  return <span class={`badge ${tone[props.value] ?? 'muted'}`}>{props.value}</span>;
}
