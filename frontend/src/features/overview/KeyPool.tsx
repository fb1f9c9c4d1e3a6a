// An upstream's key pool as the dashboard may show it: each key by its last
// four characters (never the key), a resting one with when it is back.
import type { KeyState } from '../../lib/types';
import { parseTime, time } from '../../lib/format';
import { t } from '../../lib/i18n';
import { useGatewayNow } from '../../state/gateway';

/** resting is whether k rests at now (ms), by the gateway's clock. */
export function resting(k: KeyState, now: number): boolean {
  const until = parseTime(k.resting_until);
  return until !== null && until.getTime() > now;
}

/** why says the provider's answer that rested a key in words ("401", "quota exhausted"). */
function why(w: string | undefined): string {
  return w === 'quota_exhausted' ? t('keys.why.quota_exhausted') : (w ?? '');
}

/**
 * KeyPool lists an upstream's keys: "…1111" in use, "…2222 until 14:03" in
 * the warning colour while resting; with every key resting, the line says
 * the upstream refuses until the first is back. Nothing without a pool.
 */
export function KeyPool(props: { upstream: string; keys: readonly KeyState[] | null | undefined }) {
  const now = useGatewayNow();
  const keys = props.keys ?? [];
  if (keys.length === 0) return null;
  const rest = keys.filter((k) => resting(k, now));
  const first = rest.map((k) => k.resting_until ?? '').sort()[0];
  return (
    <span class="keypool" data-testid={`keys-${props.upstream}`}>
      {keys.map((k, i) => {
        const r = resting(k, now);
        const title = r
          ? t('keys.resting', { last4: k.last4, until: time(k.resting_until), why: why(k.why) })
          : t('keys.inUse', { last4: k.last4 });
        return (
          <span key={i} class={r ? 'warn-text' : ''} title={title} data-testid={`key-${props.upstream}-${k.last4}`} data-resting={r ? 'yes' : 'no'}>
            {i > 0 ? ' ' : ''}…{k.last4}
            {r ? ` ⏸ ${time(k.resting_until)}` : ''}
          </span>
        );
      })}
      {rest.length === keys.length ? (
        <span class="warn-text" data-testid={`keys-${props.upstream}-all-resting`}>
          {' '}
          — {t('keys.allResting', { until: time(first) })}
        </span>
      ) : null}
    </span>
  );
}
