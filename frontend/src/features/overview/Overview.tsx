import type { TenantState } from '../../lib/types';
import { fraction, percent, units } from '../../lib/format';
import { t } from '../../lib/i18n';
import { useView } from '../../state/use';
import { currencyOf, hasMoneyBudget } from '../../lib/money';
import { Money } from '../../ui/Money';
import { SpendChart } from './SpendChart';
import { Panel } from '../../ui/Panel';
import { PeriodFacts } from '../periods/PeriodFacts';
import { PeriodHistory } from '../periods/PeriodHistory';

interface Parts {
  spent: number;
  held: number;
  available: number;
  budget: number;
  /** the same parts in micros of currency, when the tenant has a money budget */
  money?: { currency: string; spent: number; held: number; available: number; budget: number };
}

/** moneyParts are a tenant's money fields, absent without a money budget (units only then). */
function moneyParts(x: TenantState, currency: string | null): Parts['money'] {
  if (!hasMoneyBudget(x) || !currency) return undefined;
  return {
    currency,
    spent: x.spent_micros ?? 0,
    held: x.held_micros ?? 0,
    available: x.available_micros ?? 0,
    budget: x.budget_micros ?? 0,
  };
}


/**
 * StackedBar shows spent / held / available of a budget. A non-zero part is
 * never thinner than a few pixels, so a 0.4 % hold stays visible; the exact
 * numbers are in the legend beside it.
 */
export function StackedBar(props: { parts: Parts; label: string; testid?: string }) {
  const p = props.parts;
  const seg = (part: number, cls: string) => {
    const f = fraction(part, p.budget);
    if (part <= 0) return null;
    return <span class={`seg ${cls}`} style={{ flexGrow: f, minWidth: '4px' }} />;
  };
  return (
    <div class="stack" role="img" aria-label={props.label} title={props.label} data-testid={props.testid}>
      {seg(p.spent, 'seg-spent')}
      {seg(p.held, 'seg-held')}
      {seg(p.available, 'seg-available')}
    </div>
  );
}

function Legend(props: { parts: Parts; id: string }) {
  const p = props.parts;
  const m = p.money;
  const item = (cls: string, label: string, n: number, key: 'spent' | 'held' | 'available') => (
    <span class="legend-item">
      <span class={`swatch ${cls}`} aria-hidden="true" />
      {label}{' '}
      <strong data-testid={`${props.id}-${key}`}>{units(n)}</strong>
      {m && <Money micros={m[key]} currency={m.currency} testid={`${props.id}-${key}-money`} />}
      <span class="muted"> ({percent(fraction(n, p.budget))})</span>
    </span>
  );
  return (
    <div class="legend">
      {item('seg-spent', t('overview.spent'), p.spent, 'spent')}
      {item('seg-held', t('overview.held'), p.held, 'held')}
      {item('seg-available', t('overview.available'), p.available, 'available')}
      <span class="legend-item muted">
        {t('overview.budget')} <span data-testid={`${props.id}-budget`}>{units(p.budget)}</span>
        {m && <Money micros={m.budget} currency={m.currency} testid={`${props.id}-budget-money`} />}
      </span>
    </div>
  );
}

/** RateUse shows a tenant's request windows as the gateway's rate limiter counts them (seed 003). */
export function RateUse(props: { x: TenantState }) {
  const x = props.x;
  if (x.per_minute <= 0 && x.per_hour <= 0) return <>{t('overview.rateNone')}</>;
  const r = x.rate;
  const part = (used: number | undefined, limit: number, key: 'overview.rateMinute' | 'overview.rateHour', id: string) => {
    const near = used !== undefined && used >= limit;
    return (
      <span class={near ? 'rate-full' : undefined} data-testid={`tenant-${x.tenant}-${id}`}>
        {t(key, { used: used === undefined ? t('fmt.unknown') : units(used), limit: units(limit) })}
      </span>
    );
  };
  const parts: preact.ComponentChildren[] = [];
  if (x.per_minute > 0) parts.push(part(r?.last_minute, x.per_minute, 'overview.rateMinute', 'rate-minute'));
  if (x.per_hour > 0) parts.push(part(r?.last_hour, x.per_hour, 'overview.rateHour', 'rate-hour'));
  if (r && r.refused > 0) parts.push(<span data-testid={`tenant-${x.tenant}-rate-refused`}>{t('overview.rateRefused', { n: units(r.refused) })}</span>);
  return (
    <>
      {parts.map((p, i) => (
        <>
          {i > 0 && ', '}
          {p}
        </>
      ))}
    </>
  );
}

const none: TenantState[] = [];

/** TenantFacts are a tenant's budget period, its calls in flight and waiting, its rate use, and whether it was deleted. */
function TenantFacts(props: { x: TenantState }) {
  const x = props.x;
  return (
    <>
      {x.period && (
        <>
          <PeriodFacts x={x} />
          {' · '}
        </>
      )}
      <span data-testid={`tenant-${x.tenant}-active`}>{t('overview.concurrency', { active: units(x.active), max: units(x.max_concurrent) })}</span>
      {' · '}
      <span data-testid={`tenant-${x.tenant}-queued`}>{t('overview.queued')} {units(x.queued ?? 0)}</span>
      {' · '}
      <RateUse x={x} />
      {x.removed && (
        <>
          {' · '}
          <span class="muted" data-testid={`tenant-${x.tenant}-removed`}>
            {t('overview.removed')}
          </span>
        </>
      )}
    </>
  );
}

/** Overview: each tenant's budget as spent, held and available, and the totals. */
export function Overview() {
  const ts = useView((v) => v.state?.tenants ?? none);
  const currency = useView((v) => currencyOf(v.state));
  const total: Parts = { spent: 0, held: 0, available: 0, budget: 0 };
  let active = 0;
  for (const x of ts) {
    total.spent += x.spent_units;
    total.held += x.held_units;
    total.available += x.available_units;
    total.budget += x.budget_units;
    active += x.active;
  }
  // The gateway's own count of calls waiting at a gate: right however many runs there are (the state lists 50).
  const queued = ts.reduce((n, x) => n + (x.queued ?? 0), 0);
  const row = (id: string, name: string, p: Parts, extra: preact.ComponentChildren, below?: preact.ComponentChildren) => (
    <div class="tenant" data-testid={`tenant-row-${id}`} key={id}>
      <div class="tenant-head">
        <strong>{name}</strong>
        <span class="muted small">{extra}</span>
      </div>
      <StackedBar
        parts={p}
        testid={`bar-${id}`}
        label={t('overview.barLabel', {
          tenant: name,
          spent: units(p.spent),
          held: units(p.held),
          available: units(p.available),
          budget: units(p.budget),
        })}
      />
      <Legend parts={p} id={`tenant-${id}`} />
      {below}
    </div>
  );
  return (
    <Panel words="overview" testid="tenants-table" isEmpty={ts.length === 0}>
      {ts.map((x) =>
        row(
          x.tenant,
          x.tenant,
          { spent: x.spent_units, held: x.held_units, available: x.available_units, budget: x.budget_units, money: moneyParts(x, currency) },
          <TenantFacts x={x} />,
          <PeriodHistory tenant={x.tenant} current={x.period} currency={currency} />,
        ),
      )}
      {ts.length > 1 &&
        row(
          '_total',
          t('overview.totals'),
          total,
          <>
            {t('overview.active')} {units(active)} · <span data-testid="total-queued">{t('overview.queued')} {units(queued)}</span>
          </>,
        )}
      <SpendChart />
    </Panel>
  );
}
