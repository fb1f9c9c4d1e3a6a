import { useState } from 'preact/hooks';
import type { QuotaState, Snapshot } from '../../lib/types';
import { duration, fullTime, known, percent, units } from '../../lib/format';
import { useStore, useView } from '../../state/use';
import { Ago, When } from '../../ui/Ago';
import { t } from '../../lib/i18n';
import { wholeUnits } from '../../lib/parse';
import { evictionWords, synced, tone, wall } from '../../lib/quota';
import { Note } from '../../ui/Note';
import { QuotaChart } from './QuotaChart';
import { Panel } from '../../ui/Panel';

const key = (q: QuotaState) => `${q.upstream}/${q.model}`;

/** ratio is an overrun ratio as "×1.25" (two decimals at most). */
const ratio = (r: number) => `×${Math.round(r * 100) / 100}`;

/** overrunText is the learned overrun and the tail held back beyond it, or "none". */
function overrunText(q: QuotaState): string {
  const r = q.overrun ?? 1;
  const tail = q.overrun_tail ?? 0;
  if (r <= 1 && tail <= 0) return t('quota.overrunNone');
  return tail > 0 ? t('quota.overrunTail', { ratio: ratio(r), tail: units(tail) }) : ratio(r);
}

const headroomTerms = ['lag', 'expiry', 'buffer', 'skew', 'carry', 'overrun'] as const;

/** headroomText says how far below the estimated pool today's calls are admitted, and why; null when nothing is held back. */
function headroomText(q: QuotaState): string | null {
  const h = q.headroom;
  if (!h || h.gap <= 0) return null;
  const terms = headroomTerms.filter((k) => h[k] > 0).map((k) => t(`quota.term.${k}`, { units: units(h[k]) }));
  const text = t('quota.headroom', { admit: units(h.admit), gap: units(h.gap), pool: units(h.pool), terms: terms.join(t('quota.termSep')) });
  return h.wall > 0 ? `${text} ${t('quota.headroomWall', { wall: units(h.wall) })}` : text;
}

const none: QuotaState[] = [];
const noSnapshots: Snapshot[] = [];

/** Quota: each guarded model's day against its walls, with its sync and a reading typed in. */
export function Quota() {
  const quota = useView((v) => v.state?.quota ?? none);
  return (
    <Panel words="quota" testid="quota-table" isEmpty={quota.length === 0}>
      {quota.map((q) => (
        <QuotaCard key={key(q)} q={q} />
      ))}
    </Panel>
  );
}

function QuotaCard(props: { q: QuotaState }) {
  const store = useStore();
  const busy = useView((v) => v.busy);
  const snapshots = useView((v) => v.state?.snapshots ?? noSnapshots);
  const q = props.q;
  const k = key(q);
  const id = `${q.upstream}-${q.model}`;
  const [open, setOpen] = useState(false);
  const [opened, setOpened] = useState(0);
  const ok = synced(q);
  const w = wall(q);
  const tn = tone(q);
  return (
    <div class={`quota-card tone-${tn}`} data-testid={`quota-row-${id}`}>
      <div class="quota-head">
        <strong>{k}</strong>
        <span class="muted small">{q.day}</span>
        <span class={`badge ${tn === 'evicted' ? 'bad' : tn === 'near' ? 'warn' : 'ok'}`} data-testid={`quota-${id}-state`}>
          {tn === 'evicted' ? t('quota.evicted') : tn === 'near' ? t('quota.near') : t('quota.open')}
        </span>
        {w !== null && w > 0 && (
          <span class="muted small">{t('quota.ofWall', { pct: percent((q.usage_today + q.held_in_flight) / w) })}</span>
        )}
        <span class="spacer" />
        {q.can_sync !== false && (
          <button type="button" data-testid={`sync-${id}`} disabled={busy.has(`sync:${k}`)} onClick={() => void store.syncQuota(q.upstream, q.model)}>
            {t('quota.sync')}
          </button>
        )}
        <button
          type="button"
          data-testid={`balance-${id}`}
          aria-expanded={open}
          onClick={() => {
            setOpened(opened + 1);
            setOpen(!open);
          }}
        >
          {t('quota.enter')}
        </button>
      </div>
      <Note scope={`quota:${k}`} />
      {q.evicted && (
        <p class="reason bad-text" data-testid={`quota-${id}-reason`}>
          {evictionWords(q)}
        </p>
      )}
      {q.sync_error && <p class="reason warn-text">{t('quota.syncError', { error: q.sync_error })}</p>}
      {open && <BalanceForm key={opened} q={q} id={id} busy={busy.has(`balance:${k}`)} onDone={() => setOpen(false)} />}
      <QuotaFacts q={q} id={id} />
      {ok && q.admit_limit !== undefined && q.admit_limit < q.limit && q.usage_today < q.limit && (
        <p class="muted small" data-testid={`quota-${id}-admit-why`}>
          {t('quota.admitWhy', {
            admit: units(q.admit_limit),
            limit: units(q.limit),
            carry: units((q.carry_settled ?? 0) + (q.carry_held ?? 0)),
            ratio: ratio(q.overrun ?? 1),
            tail: units(q.overrun_tail ?? 0),
          })}
        </p>
      )}
      {ok && headroomText(q) !== null && (
        <p class="muted small" data-testid={`quota-${id}-headroom`}>
          {headroomText(q)}
        </p>
      )}
      {ok && q.limit !== q.limit_v6 && (
        <p class="muted small" data-testid={`quota-${id}-v6`}>
          {t('quota.v6why', { v6: units(q.limit_v6), ours: units(q.limit) })}
        </p>
      )}
      <QuotaChart q={q} snapshots={snapshots.filter((s) => s.upstream === q.upstream && s.model === q.model && s.day === q.day)} id={id} />
    </div>
  );
}

/** QuotaFacts are a guarded model's figures: unknown until a sync has read them, never 0. */
function QuotaFacts(props: { q: QuotaState; id: string }) {
  const { q, id } = props;
  const ok = synced(q);
  const fact = (label: string, value: string, testid?: string) => (
    <div>
      <dt>{label}</dt>
      <dd class="num" data-testid={testid}>
        {value}
      </dd>
    </div>
  );
  return (
    <dl class="facts quota-facts">
      {fact(t('quota.usage'), units(q.usage_today), `quota-${id}-usage`)}
      {fact(t('quota.held'), units(q.held_in_flight))}
      {fact(t('quota.balance'), known(q.balance_at_sync, ok))}
      {fact(t('quota.b0'), known(q.b0_estimate, ok || !!q.b0_manual))}
      {fact(t('quota.limit'), known(q.limit, ok), `quota-${id}-limit`)}
      {fact(t('quota.limitV6'), known(q.limit_v6, ok), `quota-${id}-limit-v6`)}
      {fact(t('quota.cap'), q.daily_cap ? units(q.daily_cap) : '—')}
      {fact(t('quota.wall'), q.usage_wall ? units(q.usage_wall) : '—')}
      {fact(t('quota.buffer'), q.small_buffer ? units(q.small_buffer) : '—')}
      {fact(t('quota.admitLimit'), known(q.admit_limit ?? q.limit, ok), `quota-${id}-admit-limit`)}
      {fact(t('quota.overrun'), overrunText(q), `quota-${id}-overrun`)}
      <div>
        <dt>{t('quota.synced')}</dt>
        <dd title={fullTime(q.synced_at)}>
          {ok ? <When at={q.synced_at} /> : t('fmt.unknown')}
          {ok && (
            <div class="muted small">
              <Ago at={q.synced_at} /> · {t('quota.lag', { lag: duration(q.lag_seconds) })}
            </div>
          )}
        </dd>
      </div>
    </dl>
  );
}

function BalanceForm(props: { q: QuotaState; id: string; busy: boolean; onDone: () => void }) {
  const store = useStore();
  const [kind, setKind] = useState<'balance' | 'b0'>('balance');
  const [text, setText] = useState('');
  const [err, setErr] = useState<string | null>(null);
  async function submit(e: Event) {
    e.preventDefault();
    const n = wholeUnits(text);
    if (n === null) {
      setErr(t('quota.errReading'));
      return;
    }
    setErr(null);
    if (await store.setBalance(props.q.upstream, props.q.model, kind, n)) props.onDone();
  }
  return (
    <form class="inline" onSubmit={submit} data-testid={`balance-form-${props.id}`} noValidate>
      <label>
        {t('quota.reading')}
        <select value={kind} data-testid={`balance-kind-${props.id}`} onChange={(e) => setKind((e.target as HTMLSelectElement).value as 'balance' | 'b0')}>
          <option value="balance">{t('quota.readingBalance')}</option>
          <option value="b0">{t('quota.readingB0')}</option>
        </select>
      </label>
      <label>
        {t('quota.units')}
        <input
          data-testid={`balance-value-${props.id}`}
          inputMode="numeric"
          placeholder="2,242,178"
          value={text}
          aria-invalid={err !== null}
          onInput={(e) => setText((e.target as HTMLInputElement).value)}
        />
        {err && (
          <span class="field-error" role="alert">
            {err}
          </span>
        )}
      </label>
      <button type="submit" class="primary" disabled={props.busy} data-testid={`balance-submit-${props.id}`}>
        {t('quota.record')}
      </button>
      <button type="button" onClick={props.onDone}>
        {t('quota.close')}
      </button>
    </form>
  );
}
