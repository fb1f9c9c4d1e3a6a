import type { Snapshot } from '../../lib/types';
import { duration, fullTime, units } from '../../lib/format';
import { t } from '../../lib/i18n';
import { TablePanel, type Column } from '../../ui/TablePanel';
import { useView } from '../../state/use';
import { When } from '../../ui/Ago';

const none: Snapshot[] = [];

export function SnapshotsList() {
  const snapshots = useView((v) => v.state?.snapshots ?? none);
  const columns: Column[] = [
    { label: t('quota.synced') },
    { label: t('holds.model') },
    { label: t('quota.balance'), class: 'num' },
    { label: t('snap.usageAtSync'), class: 'num' },
    { label: t('quota.limit'), class: 'num' },
    { label: t('quota.limitV6'), class: 'num' },
    { label: t('quota.b0'), class: 'num' },
    { label: t('quota.lag', { lag: '' }).trim(), class: 'num' },
    { label: t('snap.source') },
  ];
  return (
    <TablePanel
      title={t('snap.title')}
      note={t('snap.note')}
      testid="snapshots-list"
      columns={columns}
      empty={t('snap.empty')}
      isEmpty={snapshots.length === 0}
    >
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
