import type { AuditRow } from '../../lib/api';
import { alertText } from '../../lib/alerts';
import { currencyOf } from '../../lib/money';
import { useView } from '../../state/use';

/**
 * AuditDetail is an audit row's reason, evidence and detail; an alert row
 * is said in the page's language instead, its kind named, the gateway's
 * own sentence kept as the tooltip.
 */
export function AuditDetail(props: { row: AuditRow }) {
  const r = props.row;
  const currency = useView((v) => currencyOf(v.state));
  if (r.kind !== 'alert') return <>{[r.reason, r.evidence, r.detail].filter(Boolean).join(' · ')}</>;
  const a = alertText(r, currency);
  return (
    <span title={r.detail} data-testid={`audit-alert-${r.seq}`}>
      {a.kind && <span class="badge info">{a.kind}</span>} {a.text}
    </span>
  );
}
