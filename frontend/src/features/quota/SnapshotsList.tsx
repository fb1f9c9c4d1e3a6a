import type { Snapshot } from '../../lib/types';
import { duration, fullTime, units } from '../../lib/format';
import { t } from '../../lib/i18n';
import { TablePanel, figures, headings, type Column } from '../../ui/TablePanel';
import { useView } from '../../state/use';
import { When } from '../../ui/Ago';

const none: Snapshot[] = [];

export function SnapshotsList() {
  const snapshots = useView((v) => v.state?.snapshots ?? none);
  const columns: Column[] = [
    ...headings('quota.synced', 'holds.model'),
    ...figures('quota.balance', 'snap.usageAtSync', 'quota.limit', 'quota.limitV6', 'quota.b0'),
    { label: t('quota.lag', { lag: '' }).trim(), class: 'num' },
    ...headings('snap.source'),
  ];
  return (
    <TablePanel words="snap" testid="snapshots-list" columns={columns} isEmpty={snapshots.length === 0}>
      {snapshots.map((s) => (
        <tr key={s.id} data-testid={`snapshot-row-${s.id}`} title={s.detail}>
          <td title={fullTime(s.synced_at)}><When at={s.synced_at} /></td>
          <td>
            {s.upstream}/{s.model}
          </td>
          <td class="num">{units(s.balance_at_sync)}</td>
          <td class="num">{units(s.usage_at_sync)}</td>
          <td class="num">{units(s.limit)}</td>
          <td class="num">{units(s.limit_v6)}</td>
          <td class="num">{units(s.b0_estimate)}</td>
          <td class="num">{duration(s.lag_seconds)}</td>
          <td>{s.source}</td>
        </tr>
      ))}
    </TablePanel>
  );
}
