import { useEffect, useState } from 'preact/hooks';
import { currencyOf, decimalOf, microsOf, money } from '../../lib/money';
import type { TenantPolicy, TenantSettings as TenantSettingsData } from '../../lib/api';
import { copyText } from '../../lib/clipboard';
import { units } from '../../lib/format';
import { wholeUnits } from '../../lib/parse';
import { t } from '../../lib/i18n';
import { noteText } from '../../state/notes';
import { FORM } from '../../state/tenants';
import { useStore, useView } from '../../state/use';
import { Dialog } from '../../ui/Dialog';
import { TableHead, figures, headings, type Column } from '../../ui/TablePanel';
import { WriteBackButton, WrittenBack } from './WriteBack';

/** columns head the tenants' table; a row's last cell holds its actions. */
function columns(): Column[] {
  return [...headings('audit.tenant'), ...figures('overview.budget', 'settings.concurrency', 'settings.perMinute', 'settings.perHour'), ...headings('settings.models'), { label: '' }];
}

const empty: TenantPolicy = { id: '', budget_units: 0, max_concurrent: 1, per_minute: 0, per_hour: 0, allowed_models: [] };

/** TenantSettings: create and edit tenants, rotate a key (shown once), and the banner of values that differ from the config file. */
export function TenantSettings() {
  const store = useStore();
  const v = useView((v) => v.tenants);
  const [editing, setEditing] = useState<TenantPolicy | null>(null);
  const [opened, setOpened] = useState(0); // a fresh form each time the dialog opens
  useEffect(() => void store.tenants.load(), [store]);
  const s = v.data;
  const err = v.error && noteText(v.error);
  const deleted = v.deleted && { tenant: v.deleted.tenant, kind: v.deleted.note.kind, text: noteText(v.deleted.note) };
  const edit = (p: TenantPolicy) => {
    setOpened(opened + 1);
    setEditing(p);
  };
  if (!s) return <section class="panel">{err ? <p class="field-error">{err}</p> : <p class="muted">{t('app.loading')}</p>}</section>;
  return (
    <section class="panel" data-testid="tenant-settings">
      <h2>
        {t('settings.tenants')} <span class="muted">{t('settings.tenantsNote')}</span>
      </h2>
      {s.overrides.length > 0 && <OverrideBanner overrides={s.overrides} />}
      {v.written && <WrittenBack result={v.written} onClose={() => store.tenants.dismissWritten()} />}
      {deleted?.kind === 'ok' && (
        <div class="banner" role="status" data-testid="tenant-deleted">
          <span>{deleted.text}</span>
          <button type="button" aria-label={t('form.close')} onClick={() => store.tenants.dismissDeleted()}>
            ×
          </button>
        </div>
      )}
      <p class="muted small">{t('settings.writeBack')}</p>
      <table>
        <TableHead columns={columns()} />
        <tbody>
          {s.tenants.map((p) => (
            <TenantRows key={p.id} p={p} refused={deleted?.tenant === p.id && deleted.kind === 'error' ? deleted.text : null} onEdit={() => edit(p)} />
          ))}
        </tbody>
      </table>
      <div class="buttons">
        <button type="button" data-testid="new-tenant" onClick={() => edit(empty)}>
          {t('settings.add')}
        </button>
      </div>
      {err && (
        <p class="field-error" role="alert">
          {err}
        </p>
      )}
      {editing && (
        <TenantForm
          key={opened}
          p={editing}
          isNew={!s.tenants.some((x) => x.id === editing.id) || editing.id === ''}
          onClose={() => setEditing(null)}
          onSaved={() => setEditing(null)}
        />
      )}
      {v.newKey && <NewKeyDialog {...v.newKey} />}
    </section>
  );
}

/** OverrideBanner lists the values that differ from the config file, with write-back and discard. */
function OverrideBanner(props: { overrides: TenantSettingsData['overrides'] }) {
  const store = useStore();
  return (
    <div class="banner stale-banner" role="status" data-testid="override-banner">
      <span>
        {t('settings.overrides')}{' '}
        {props.overrides.map((o) => `${o.tenant}.${o.field}: ${o.file || '—'} → ${o.now}`).join('; ')}
      </span>
      <WriteBackButton />{' '}
      <button type="button" data-testid="discard-overrides" onClick={() => void store.tenants.discard()}>
        {t('settings.discard')}
      </button>
    </div>
  );
}

/** TenantRows is a tenant's row with its buttons, and under it the refusal of its delete (refused). */
function TenantRows(props: { p: TenantPolicy; refused: string | null; onEdit: () => void }) {
  const store = useStore();
  const p = props.p;
  const currency = useView((v) => currencyOf(v.state));
  return (
    <>
      <tr data-testid={`settings-row-${p.id}`}>
        <td>{p.id}</td>
        <td class="num">
          {units(p.budget_units)}
          {p.budget && currency && <span class="money" data-testid={`settings-money-${p.id}`}> {money(microsOf(p.budget), currency)}</span>}
        </td>
        <td class="num">{units(p.max_concurrent)}</td>
        <td class="num">{p.per_minute ? units(p.per_minute) : '—'}</td>
        <td class="num">{p.per_hour ? units(p.per_hour) : '—'}</td>
        <td>{p.allowed_models.join(', ') || t('settings.allModels')}</td>
        <td class="act">
          <button type="button" data-testid={`edit-${p.id}`} onClick={props.onEdit}>
            {t('settings.edit')}
          </button>{' '}
          <button
            type="button"
            data-testid={`rotate-${p.id}`}
            onClick={() => {
              if (confirm(t('settings.rotateAsk', { tenant: p.id }))) void store.tenants.rotate(p.id);
            }}
          >
            {t('settings.rotate')}
          </button>{' '}
          <button
            type="button"
            class="danger"
            data-testid={`delete-${p.id}`}
            onClick={() => {
              if (confirm(t('settings.deleteAsk', { tenant: p.id }))) void store.tenants.remove(p.id);
            }}
          >
            {t('settings.delete')}
          </button>
        </td>
      </tr>
      {props.refused && (
        <tr>
          <td colSpan={7}>
            <span class="field-error" role="alert" data-testid={`delete-error-${p.id}`}>
              {props.refused}
            </span>{' '}
            <button type="button" aria-label={t('form.close')} onClick={() => store.tenants.dismissDeleted()}>
              ×
            </button>
          </td>
        </tr>
      )}
    </>
  );
}

/** NewKeyDialog shows a rotated key once. */
function NewKeyDialog(props: { tenant: string; key: string }) {
  const store = useStore();
  return (
    <Dialog title={t('settings.newKey', { tenant: props.tenant })} onClose={() => store.tenants.dismissNewKey()} testid="new-key-dialog">
      <p class="muted small">{t('settings.newKeyOnce')}</p>
      <pre data-testid="new-key">{props.key}</pre>
      <div class="buttons">
        <button type="button" onClick={() => void copyText(props.key)}>
          {t('connect.copy')}
        </button>
        <button type="button" class="primary" onClick={() => store.tenants.dismissNewKey()}>
          {t('form.close')}
        </button>
      </div>
    </Dialog>
  );
}

function TenantForm(props: { p: TenantPolicy; isNew: boolean; onClose: () => void; onSaved: () => void }) {
  const store = useStore();
  const [f, setF] = useState({
    id: props.p.id,
    budget: String(props.p.budget_units),
    conc: String(props.p.max_concurrent),
    pm: String(props.p.per_minute),
    ph: String(props.p.per_hour),
    models: props.p.allowed_models.join(', '),
    money: props.p.budget ?? '',
  });
  // The money budget is asked only of a gateway with a currency (config `money`).
  const currency = useView((v) => currencyOf(v.state));
  const server = useView((v) => v.notes.get(FORM));
  const busy = useView((v) => v.busy.has(FORM));
  const err = server?.kind === 'error' ? noteText(server) : null;
  useEffect(() => () => store.dismiss(FORM), [store]); // a fresh form starts without the last one's error
  const field = (k: keyof typeof f, label: string, disabled = false) => (
    <label>
      {label}
      <input data-testid={`tenant-${k}`} value={f[k]} disabled={disabled} onInput={(e) => setF({ ...f, [k]: (e.target as HTMLInputElement).value })} />
    </label>
  );
  return (
    <Dialog title={props.isNew ? t('settings.add') : t('settings.editTitle', { tenant: props.p.id })} onClose={props.onClose} testid="tenant-dialog">
      <form
        class="stacked"
        noValidate
        onSubmit={async (e) => {
          e.preventDefault();
          const nums = [f.budget, f.conc, f.pm, f.ph].map(wholeUnits);
          if (nums.some((n) => n === null)) {
            store.fail(FORM, () => t('settings.errNumbers'));
            return;
          }
          const budget = currency && f.money.trim() !== '' ? microsOf(f.money) : undefined;
          if (budget === null) {
            store.fail(FORM, () => t('settings.errMoney'));
            return;
          }
          const saved = await store.tenants.save({
            id: f.id.trim(),
            budget_units: nums[0]!,
            max_concurrent: nums[1]!,
            per_minute: nums[2]!,
            per_hour: nums[3]!,
            allowed_models: f.models.split(/[,\s]+/).filter(Boolean),
            ...(budget === undefined ? {} : { budget: decimalOf(budget) }),
          });
          if (saved) props.onSaved();
        }}
      >
        {field('id', t('audit.tenant'), !props.isNew)}
        {field('budget', t('overview.budget'))}
        {currency && field('money', t('settings.moneyBudget', { currency }))}
        {field('conc', t('settings.concurrency'))}
        {field('pm', t('settings.perMinute'))}
        {field('ph', t('settings.perHour'))}
        {field('models', t('settings.models'))}
        {err && (
          <span class="field-error" role="alert" data-testid="tenant-error">
            {err}
          </span>
        )}
        <div class="buttons">
          <button type="submit" class="primary" disabled={busy} data-testid="tenant-save">
            {t('rec.confirm')}
          </button>
          <button type="button" onClick={props.onClose}>
            {t('rec.cancel')}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
