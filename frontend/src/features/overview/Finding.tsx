import type { Finding } from '../../lib/types';
import { time, units } from '../../lib/format';
import { lang, t } from '../../lib/i18n';
import { currencyOf, microsOf } from '../../lib/money';
import { useStore, useView } from '../../state/use';
import { useNow } from '../../state/clock';
import { Note } from '../../ui/Note';

/**
 * costText is the provider's cost in the page's money format, with as many
 * places as the provider gave (a cost of $0.0042 is not rounded to the cent:
 * the figure is evidence); as the provider wrote it, with the currency, when
 * it has more places than the books keep or there is no currency to write.
 */
export function costText(cost: string, currency: string | null): string {
  const places = (cost.split('.')[1] ?? '').replace(/0+$/, '').length;
  if (microsOf(cost) === null || !currency) return currency ? `${cost} ${currency}` : cost;
  try {
    const minor = new Intl.NumberFormat(lang(), { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
    const d = Math.max(places, minor);
    return new Intl.NumberFormat(lang(), { style: 'currency', currency, minimumFractionDigits: d, maximumFractionDigits: d }).format(Number(cost));
  } catch {
    return `${cost} ${currency}`; // a currency code this browser does not know
  }
}

/** findingSentence says what the provider reported of a held run, in the page's language. */
export function findingSentence(f: Finding, currency: string | null, now: Date = new Date()): string {
  switch (f.state) {
    case 'found':
    case 'applied': {
      const args = { input: units(f.input_tokens), output: units(f.output_tokens), at: time(f.looked_up_at, now) };
      const figure = f.cost ? t('find.reportsCost', { ...args, cost: costText(f.cost, currency) }) : t('find.reports', args);
      return f.state === 'applied' ? t('find.applied', { figure }) : figure;
    }
    case 'refused':
      return t('find.refused', { note: f.note || t('fmt.unknown') });
    case 'gave_up':
      return t('find.gaveUp', { note: f.note || t('fmt.unknown') });
    default:
      return t('find.looking', { n: units(f.attempts) });
  }
}

/**
 * ProviderFinding stands under a held run's reason: what its provider
 * reported and, for a figure not yet applied, Apply, which reconciles the
 * hold at exactly that figure (the server takes it from its own lookup, so
 * nothing typed here can differ from what is shown).
 */
export function ProviderFinding(props: { runID: string }) {
  const store = useStore();
  const f = useView((v) => v.state?.evidence?.[props.runID]);
  const currency = useView((v) => currencyOf(v.state));
  const busy = useView((v) => v.busy.has(`reconcile:${props.runID}`));
  const now = useNow(60_000);
  const refused = useView((v) => v.notes.get(`apply:${props.runID}`)?.kind === 'error');
  if (!f) return null;
  return (
    <div class={`finding finding-${f.state}`} data-testid={`finding-${props.runID}`}>
      <span data-testid={`finding-text-${props.runID}`}>{findingSentence(f, currency, now)}</span>
      {f.state === 'found' && (
        <button
          type="button"
          class="primary"
          disabled={busy}
          data-testid={`finding-apply-${props.runID}`}
          onClick={() => store.applyFinding(props.runID, f.input_tokens + f.output_tokens)}
        >
          {busy ? t('rec.saving') : t('find.apply')}
        </button>
      )}
      {refused && <Note scope={`apply:${props.runID}`} testid={`apply-error-${props.runID}`} />}
    </div>
  );
}
