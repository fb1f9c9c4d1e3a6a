import type { TenantState } from '../../lib/types';
import { fullTime } from '../../lib/format';
import { t } from '../../lib/i18n';
import { periodName } from '../../lib/period';
import { TimeLeft } from '../../ui/TimeLeft';

/**
 * PeriodFacts name a tenant's current budget period and count down to its
 * end ("December 2026 · 29d 03h left"); the figures beside them are that
 * period's. Nothing for a budget that never renews.
 */
export function PeriodFacts(props: { x: TenantState }) {
  const x = props.x;
  if (!x.period) return null;
  const id = `tenant-${x.tenant}`;
  return (
    <span class="period-facts">
      <span class="muted">{t('period.label')}</span>{' '}
      <strong
        data-testid={`${id}-period`}
        data-period={x.period}
        title={x.period_start && x.period_end ? `${x.period} · ${t('period.span', { start: fullTime(x.period_start), end: fullTime(x.period_end) })}` : x.period}
      >
        {periodName(x.period)}
      </strong>
      {x.period_end && (
        <>
          {' · '}
          <TimeLeft end={x.period_end} testid={`${id}-time-left`} />
        </>
      )}
    </span>
  );
}
