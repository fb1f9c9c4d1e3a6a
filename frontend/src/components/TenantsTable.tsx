import type { TenantState } from '../lib/types';
import { units } from '../lib/format';
import { Bar } from './Bar';
import { TablePanel, type Column } from './TablePanel';

const columns: readonly Column[] = [
  { label: 'tenant' },
  { label: 'budget', class: 'num' },
  { label: 'spent', class: 'num' },
  { label: 'held', class: 'num' },
  { label: 'available', class: 'num' },
  { label: 'active', class: 'num' },
  { label: 'use', class: 'barcol' },
];

export function TenantsTable(props: { tenants: TenantState[] }) {
  return (
    <TablePanel
      title="Tenants"
      testid="tenants-table"
      columns={columns}
      empty="No tenants configured."
      isEmpty={props.tenants.length === 0}
    >
      {props.tenants.map((t) => (
        <tr key={t.tenant} data-testid={`tenant-row-${t.tenant}`}>
          <td>{t.tenant}</td>
          <td class="num">{units(t.budget_units)}</td>
          <td class="num">{units(t.spent_units)}</td>
          <td class="num" data-testid={`tenant-${t.tenant}-held`}>
            {units(t.held_units)}
          </td>
          <td class="num strong" data-testid={`tenant-${t.tenant}-available`}>
            {units(t.available_units)}
          </td>
          <td class="num">
            {t.active} / {t.max_concurrent}
          </td>
          <td class="barcol">
            <Bar spent={t.spent_units} held={t.held_units} budget={t.budget_units} />
          </td>
        </tr>
      ))}
    </TablePanel>
  );
}
