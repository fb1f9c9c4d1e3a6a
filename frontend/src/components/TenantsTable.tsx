import type { TenantState } from '../lib/types';
import { units } from '../lib/format';
import { Bar } from './Bar';

export function TenantsTable(props: { tenants: TenantState[] }) {
  return (
    <section class="panel">
      <h2>Tenants</h2>
      <div class="scroll">
        <table data-testid="tenants-table">
          <thead>
            <tr>
              <th>tenant</th>
              <th class="num">budget</th>
              <th class="num">spent</th>
              <th class="num">held</th>
              <th class="num">available</th>
              <th class="num">active</th>
              <th class="barcol">use</th>
            </tr>
          </thead>
          <tbody>
            {props.tenants.length === 0 && (
              <tr>
                <td colSpan={7} class="empty">
                  No tenants configured.
                </td>
              </tr>
            )}
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
          </tbody>
        </table>
      </div>
    </section>
  );
}
