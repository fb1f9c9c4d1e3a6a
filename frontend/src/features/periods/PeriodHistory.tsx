import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { units } from '../../lib/format';
import { lang, t } from '../../lib/i18n';
import { money } from '../../lib/money';
import { periodName, periodShort, type History } from '../../lib/period';
import { historyOf } from '../../state/gateway';
import { useView } from '../../state/use';
import { canDraw, css } from '../../ui/canvas';

/** amountOf is one period's spend as words: money when the periods carry it, else units. */
function amountOf(h: History, i: number, currency: string | null): string {
  if (h.micros && currency) return money(h.micros[i], currency) || units(h.units[i]);
  return units(h.units[i]);
}

/** Bars draws the periods' spend as bars, the current period's in the accent colour; floats here only, to place bars. */
function Bars(props: { h: History; currency: string | null; current: string | undefined; label: string }) {
  const el = useRef<HTMLDivElement>(null);
  const { h, currency, current } = props;
  const inMoney = !!(h.micros && currency);
  useEffect(() => {
    if (!el.current || !canDraw() || h.periods.length === 0) return;
    const ink = css('--muted', '#6a7380');
    const grid = css('--line', '#e2e5ea');
    const ys = h.periods.map((_p, i) => (inMoney && h.micros ? Number(h.micros[i]) / 1e6 : h.units[i]));
    const bars = uPlot.paths.bars?.({ size: [0.6, 28] });
    const p = new uPlot(
      {
        width: Math.max(220, Math.min(420, el.current.clientWidth || 320)),
        height: 96,
        legend: { show: false },
        cursor: { show: false },
        scales: { x: { time: false, range: [-0.5, h.periods.length - 0.5] }, y: { range: (_u, _min, max) => [0, max * 1.15 || 1] } },
        axes: [
          { stroke: ink, grid: { show: false }, splits: () => h.periods.map((_p, i) => i), values: (_u, vals) => vals.map((v) => periodShort(h.periods[v] ?? '')) },
          {
            stroke: ink,
            grid: { stroke: grid },
            size: 70,
            ticks: { show: false },
            values: (_u, vals) => vals.map((v) => (inMoney ? money(BigInt(Math.round(v * 1e6)), currency) : units(v))),
          },
        ],
        series: [
          {},
          {
            label: props.label,
            stroke: css('--accent', '#2f6fd6'),
            fill: css('--accent', '#2f6fd6') + '99',
            paths: bars,
            points: { show: false },
          },
        ],
      },
      [h.periods.map((_p, i) => i), ys],
      el.current,
    );
    return () => p.destroy();
  }, [h.periods.join(), h.units.join(), h.micros?.join(), currency, current, lang()]);
  return <div ref={el} class="chart-canvas" role="img" aria-label={props.label} />;
}

/**
 * PeriodHistory is a small chart of a tenant's spend in its last periods,
 * with each period's spend in words for a reader that cannot see the bars.
 * Nothing for a tenant without periods.
 */
export function PeriodHistory(props: { tenant: string; current: string | undefined; currency: string | null }) {
  const h = useView((v) => historyOf(v, props.tenant), (a, b) => JSON.stringify(a, big) === JSON.stringify(b, big));
  if (h.periods.length === 0) return null;
  const label = t('history.label', { tenant: props.tenant, n: h.periods.length });
  const id = `history-${props.tenant}`;
  return (
    <figure class="chart history" data-testid={id}>
      <Bars h={h} currency={props.currency} current={props.current} label={label} />
      <figcaption class="muted small">
        <strong>{t('history.title')}</strong>{' '}
        <ol class="history-list">
          {h.periods.map((p, i) => (
            <li key={p} data-testid={`${id}-${p}`} data-period={p} class={p === props.current ? 'current' : undefined}>
              <span title={periodName(p)}>{periodShort(p)}</span> {amountOf(h, i, props.currency)}
              {p === props.current && <span class="sr"> ({t('history.current')})</span>}
            </li>
          ))}
        </ol>
      </figcaption>
    </figure>
  );
}

/** big lets JSON.stringify compare histories, whose money is BigInt. */
function big(_k: string, v: unknown) {
  return typeof v === 'bigint' ? v.toString() : v;
}
