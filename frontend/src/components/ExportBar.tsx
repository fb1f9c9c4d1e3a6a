import { useState } from 'preact/hooks';
import type { Actions } from '../lib/store';
import type { TenantState } from '../lib/types';

export function ExportBar(props: { tenants: TenantState[]; actions: Actions; busy: boolean }) {
  const [tenant, setTenant] = useState('');
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  return (
    <section class="panel export">
      <h2>Audit log</h2>
      <form
        class="inline"
        onSubmit={(e) => {
          e.preventDefault();
          void props.actions.exportCSV({ from, to, tenant });
        }}
      >
        <label>
          tenant
          <select value={tenant} onChange={(e) => setTenant((e.target as HTMLSelectElement).value)}>
            <option value="">all tenants</option>
            {props.tenants.map((t) => (
              <option key={t.tenant} value={t.tenant}>
                {t.tenant}
              </option>
            ))}
          </select>
        </label>
        <label>
          from
          <input type="date" value={from} onInput={(e) => setFrom((e.target as HTMLInputElement).value)} />
        </label>
        <label>
          to
          <input type="date" value={to} onInput={(e) => setTo((e.target as HTMLInputElement).value)} />
        </label>
        <button type="submit" class="primary" data-testid="export-csv" disabled={props.busy}>
          {props.busy ? 'Exporting…' : 'Export CSV'}
        </button>
      </form>
    </section>
  );
}
