import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { canDraw, css } from '../../ui/canvas';
import type { QuotaState, Snapshot } from '../../lib/types';
import { chartData, type ChartData, type Threshold } from '../../lib/chart';
import { tone } from '../../lib/quota';
import { duration, units } from '../../lib/format';
import { lang, t, type Key } from '../../lib/i18n';
import { useGatewayNow } from '../../state/gateway';

const thresholdKeys: Record<Threshold['key'], Key> = {
  cap: 'quota.cap',
  limit: 'quota.limit',
  limitV6: 'quota.limitV6',
  wall: 'quota.wall',
  buffer: 'quota.buffer',
};

/** drawMarks draws on the plot the held-in-flight band at now and each threshold as a labelled line. */
function drawMarks(u: uPlot, d: ChartData, held: string, ink: string) {
  const ctx = u.ctx;
  ctx.save();
  ctx.font = `${11 * devicePixelRatio}px ${css('font-family', 'sans-serif')}`;
  // held-in-flight band above the usage at now
  const last = d.xs.length - 1;
  const top = d.top[last];
  if (top !== null && top > (d.usage[last] ?? 0)) {
    const x = u.valToPos(d.xs[last], 'x', true);
    const y0 = u.valToPos(d.usage[last] ?? 0, 'y', true);
    const y1 = u.valToPos(top, 'y', true);
    ctx.fillStyle = `${held}66`;
    ctx.fillRect(x - 10 * devicePixelRatio, y1, 10 * devicePixelRatio, y0 - y1);
  }
  for (const [i, th] of d.thresholds.entries()) {
    const y = u.valToPos(th.value, 'y', true);
    ctx.strokeStyle = th.key === 'wall' || th.key === 'limit' ? css('--bad', '#c0362c') : ink;
    ctx.setLineDash(th.key === 'limitV6' || th.key === 'buffer' ? [4, 4] : []);
    ctx.beginPath();
    ctx.moveTo(u.bbox.left, y);
    ctx.lineTo(u.bbox.left + u.bbox.width, y);
    ctx.stroke();
    ctx.fillStyle = ctx.strokeStyle;
    // staggered along the line, so thresholds at nearly one value stay readable
    ctx.fillText(`${t(thresholdKeys[th.key])} ${units(th.value)}`, u.bbox.left + (4 + i * 170) * devicePixelRatio, y - 3);
  }
  ctx.restore();
}

/** ChartLegend names the chart's series and lists the thresholds in words. */
function ChartLegend(props: { d: ChartData; near: boolean; id: string }) {
  const { d, near } = props;
  const snaps = d.snaps.map((v, i) => (v === null ? null : { v, lag: d.lags[i] })).filter((x) => x !== null);
  return (
    <figcaption class="muted small">
      <span class="legend-item">
        <span class={`swatch ${near ? 'swatch-warn' : 'swatch-accent'}`} /> {t('quota.series.usage')}
      </span>
      <span class="legend-item">
        <span class="swatch seg-held" /> {t('quota.series.held')}
      </span>
      {snaps.length > 0 && (
        <span class="legend-item">
          ○ {t('quota.series.snap')} × {snaps.length} ({snaps.map((s) => t('quota.lag', { lag: duration(s!.lag) })).join(', ')})
        </span>
      )}
      {d.thresholds.map((th) => (
        <span class="legend-item" key={th.key} data-testid={`quota-${props.id}-threshold-${th.key}`}>
          ― {t(thresholdKeys[th.key])} {units(th.value)}
        </span>
      ))}
    </figcaption>
  );
}

/** QuotaChart draws a guarded model's day with uPlot; the thresholds are listed in words too. */
export function QuotaChart(props: { q: QuotaState; snapshots: Snapshot[]; id: string }) {
  // The day's axis runs to now; a minute is the finest step it shows.
  const now = new Date(useGatewayNow(60_000)); // the quota day is the gateway's
  const el = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const d = chartData(props.q, props.snapshots, now);
  const near = tone(props.q) !== 'ok';
  useEffect(() => {
    if (!el.current || !canDraw()) return;
    const line = near ? css('--warn', '#b26a00') : css('--accent', '#2f6fd6');
    const ink = css('--muted', '#6a7380');
    const grid = css('--line', '#e2e5ea');
    const held = css('--held', '#e0a100');
    const opts: uPlot.Options = {
      width: Math.max(300, el.current.clientWidth || 600),
      height: 200,
      legend: { show: false },
      scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(max, ...d.thresholds.map((x) => x.value)) * 1.08 || 1] } },
      axes: [
        {
          stroke: ink,
          grid: { stroke: grid },
          // local clock times in the page's language, not uPlot's English "12am"
          values: (_u, vals) => vals.map((v) => new Intl.DateTimeFormat(lang(), { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(new Date(v * 1000))),
        },
        { stroke: ink, grid: { stroke: grid }, size: 70, values: (_u, vals) => vals.map((v) => units(v)) },
      ],
      series: [
        {},
        { label: t('quota.series.usage'), stroke: line, width: 2, fill: `${line}22` },
        { label: t('quota.series.held'), stroke: held, width: 0, points: { show: true, size: 9, stroke: held, fill: held } },
        { label: t('quota.series.snap'), stroke: ink, width: 0, points: { show: true, size: 7, stroke: ink, fill: css('--panel', '#fff') } },
      ],
      hooks: {
        draw: [
          (u) => drawMarks(u, d, held, ink),
        ],
      },
    };
    const data: uPlot.AlignedData = [d.xs, d.usage, d.top, d.snaps];
    plot.current?.destroy();
    plot.current = new uPlot(opts, data, el.current);
    return () => {
      plot.current?.destroy();
      plot.current = null;
    };
  }, [JSON.stringify(d), near, t('quota.series.usage')]);
  return (
    <figure class="chart" data-testid={`quota-chart-${props.id}`}>
      <div ref={el} class="chart-canvas" aria-label={t('quota.chart', { model: `${props.q.upstream}/${props.q.model}` })} role="img" />
      <ChartLegend d={d} near={near} id={props.id} />
    </figure>
  );
}
