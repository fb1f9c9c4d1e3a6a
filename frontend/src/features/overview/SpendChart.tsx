import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { canDraw, css } from '../../ui/canvas';
import { spendByDay, spendFromRollup, type SpendData } from '../../lib/spend';
import { currencyOf, money } from '../../lib/money';
import { units } from '../../lib/format';
import { lang, t } from '../../lib/i18n';
import type { Run } from '../../lib/types';
import { useStore, useView } from '../../state/use';

const none: Run[] = [];
const palette = ['--accent', '--held', '--bad', '--good', '--muted'];

/** Plot draws one line per series over the days; amounts become floats here only, to place points. */
function Plot(props: { d: SpendData; currency: string; label: string }) {
  const el = useRef<HTMLDivElement>(null);
  const { d, currency } = props;
  useEffect(() => {
    if (!el.current || !canDraw() || d.days.length === 0) return;
    const ink = css('--muted', '#6a7380');
    const grid = css('--line', '#e2e5ea');
    const series = d.series.slice(0, palette.length);
    const day = new Intl.DateTimeFormat(lang(), { month: 'short', day: 'numeric' });
    const p = new uPlot(
      {
        width: Math.max(260, el.current.clientWidth || 360),
        height: 140,
        legend: { show: false },
        scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, max * 1.1 || 1] } },
        axes: [
          { stroke: ink, grid: { stroke: grid }, values: (_u, vals) => vals.map((v) => day.format(new Date(v * 1000))) },
          { stroke: ink, grid: { stroke: grid }, size: 80, values: (_u, vals) => vals.map((v) => money(Math.round(v * 1e6), currency)) },
        ],
        series: [{}, ...series.map((s, i) => ({ label: s.name, stroke: css(palette[i], '#2f6fd6'), width: 2, points: { show: true, size: 6 } }))],
      },
      [d.starts, ...series.map((s) => s.micros.map((m) => Number(m) / 1e6))],
      el.current,
    );
    return () => p.destroy();
  }, [JSON.stringify(d, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)), currency, lang()]);
  return <div ref={el} class="chart-canvas" role="img" aria-label={props.label} />;
}

/** SpendPanel is one breakdown: the plot and, in words, each series' total in money. */
function SpendPanel(props: { d: SpendData; by: 'tenant' | 'model'; currency: string }) {
  const d = props.d;
  const title = t(props.by === 'tenant' ? 'spend.byTenant' : 'spend.byModel');
  return (
    <figure class="chart" data-testid={`spend-chart-${props.by}`}>
      <Plot d={d} currency={props.currency} label={title} />
      <figcaption class="muted small">
        <strong>{title}</strong>{' '}
        {d.series.map((s, i) => (
          <span class="legend-item" key={s.name} data-testid={`spend-${props.by}-${s.name}`}>
            {i < palette.length && <span class="swatch" style={{ background: css(palette[i], '#2f6fd6') }} />} {s.name} {money(s.total, props.currency)}
          </span>
        ))}
      </figcaption>
    </figure>
  );
}

/**
 * SpendChart is the Overview's spend in money per day, by tenant and by
 * model, over the last days of the ledger's rollup (every run of the period,
 * re-read as states arrive), or, from a gateway without the rollup, from the
 * runs the state carries (the most recent ones, so the days they span).
 * Nothing when nothing has a cost or the gateway has no currency.
 */
export function SpendChart() {
  const store = useStore();
  useEffect(() => store.books.watchSpend(), [store]);
  const rollup = useView((v) => v.books.spend);
  const runs = useView((v) => v.state?.runs ?? none);
  const currency = useView((v) => currencyOf(v.state));
  if (!currency) return null;
  const span = (d: SpendData) => ({ from: d.days[0], to: d.days[d.days.length - 1] });
  if (rollup) {
    return <SpendFigure currency={currency} caption={(d) => t('spend.days', { days: d.days.length, ...span(d) })} by={(by) => spendFromRollup(rollup, by)} />;
  }
  const priced = runs.filter((r) => (r.cost_micros ?? 0) > 0);
  return <SpendFigure currency={currency} caption={(d) => t('spend.window', { runs: units(runs.length), ...span(d) })} by={(by) => spendByDay(priced, by)} />;
}

/** SpendFigure is the chart's title and its two breakdowns; nothing when no day spent. */
function SpendFigure(props: { currency: string; caption: (d: SpendData) => string; by: (by: 'tenant' | 'model') => SpendData }) {
  const d = props.by('tenant');
  if (d.days.length === 0) return null;
  return (
    <div class="spend" data-testid="spend">
      <h3>
        {t('spend.title')}{' '}
        <span class="muted small" data-testid="spend-window">
          {props.caption(d)}
        </span>
      </h3>
      <SpendPanel d={d} by="tenant" currency={props.currency} />
      <SpendPanel d={props.by('model')} by="model" currency={props.currency} />
    </div>
  );
}
