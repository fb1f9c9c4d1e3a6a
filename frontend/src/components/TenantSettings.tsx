import { useEffect, useState } from 'preact/hooks';
import { ApiError, type Api, type TenantPolicy, type TenantSettings as Settings, type WriteBack } from '../lib/api';
import { units } from '../lib/format';
import { wholeUnits } from '../lib/parse';
import { errorKey, errorText } from '../lib/errors';
import { t } from '../lib/i18n';
import { Dialog } from './Dialog';
import { WriteBackButton, WrittenBack } from './WriteBack';

const empty: TenantPolicy = { id: '', budget_units: 0, max_concurrent: 1, per_minute: 0, per_hour: 0, allowed_models: [] };

/** TenantSettings: create and edit tenants, rotate a key (shown once), and the banner of values that differ from the config file. */
export function TenantSettings(props: { api: Api }) {
  const [s, setS] = useState<Settings | null>(null);
  const [err, setErr] = useState<string | null>(null);
  const [editing, setEditing] = useState<TenantPolicy | null>(null);
  const [opened, setOpened] = useState(0);
  const [written, setWritten] = useState<WriteBack | null>(null);
  const [newKey, setNewKey] = useState<{ tenant: string; key: string } | null>(null);
  // The outcome of a delete, shown under that tenant's row (a refusal) or above the table.
  const [deleted, setDeleted] = useState<{ tenant: string; error?: string; note?: string } | null>(null);
  const remove = (id: string) => {
    if (!confirm(t('settings.deleteAsk', { tenant: id }))) return;
    props.api.deleteTenant(id).then(
      (next) => {
        setS(next);
        const inFile = next.overrides.some((o) => o.tenant === id && o.field === 'tenant');
        setDeleted({ tenant: id, note: t(inFile ? 'settings.deletedInFile' : 'settings.deleted', { tenant: id }) });
      },
      // A refusal the catalogue knows says it was not deleted, and why; the server's own words get the lead-in.
      (e: Error) =>
        setDeleted({ tenant: id, error: e instanceof ApiError && errorKey(e) ? errorText(e) : `${t('settings.deleteRefused', { tenant: id })} ${errorText(e)}` }),
    );
  };
  useEffect(() => {
    props.api.tenants().then(setS, (e: Error) => setErr(errorText(e)));
  }, [props.api]);
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
      {s.overrides.length > 0 && (
        <div class="banner stale-banner" role="status" data-testid="override-banner">
          <span>
            {t('settings.overrides')}{' '}
            {s.overrides.map((o) => `${o.tenant}.${o.field}: ${o.file || '—'} → ${o.now}`).join('; ')}
          </span>
          <WriteBackButton api={props.api} onDone={(r) => { setS(r.settings); setWritten(r); }} onError={setErr} />{' '}
          <button type="button" data-testid="discard-overrides" onClick={() => props.api.discardTenants().then(setS, (e: Error) => setErr(errorText(e)))}>
            {t('settings.discard')}
          </button>
        </div>
      )}
      {written && <WrittenBack result={written} onClose={() => setWritten(null)} />}
      {deleted?.note && (
        <div class="banner" role="status" data-testid="tenant-deleted">
          <span>{deleted.note}</span>
          <button type="button" aria-label={t('form.close')} onClick={() => setDeleted(null)}>
            ×
          </button>
        </div>
      )}
      <p class="muted small">{t('settings.writeBack')}</p>
      <table>
        <thead>
          <tr>
            <th>{t('audit.tenant')}</th>
            <th class="num">{t('overview.budget')}</th>
            <th class="num">{t('settings.concurrency')}</th>
            <th class="num">{t('settings.perMinute')}</th>
            <th class="num">{t('settings.perHour')}</th>
            <th>{t('settings.models')}</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {s.tenants.map((p) => [
            <tr key={p.id} data-testid={`settings-row-${p.id}`}>
              <td>{p.id}</td>
              <td class="num">{units(p.budget_units)}</td>
              <td class="num">{units(p.max_concurrent)}</td>
              <td class="num">{p.per_minute ? units(p.per_minute) : '—'}</td>
              <td class="num">{p.per_hour ? units(p.per_hour) : '—'}</td>
              <td>{p.allowed_models.join(', ') || t('settings.allModels')}</td>
              <td class="act">
                <button type="button" data-testid={`edit-${p.id}`} onClick={() => edit(p)}>
                  {t('settings.edit')}
                </button>{' '}
                <button
                  type="button"
                  data-testid={`rotate-${p.id}`}
                  onClick={() => {
                    if (!confirm(t('settings.rotateAsk', { tenant: p.id }))) return;
                    props.api.rotateKey(p.id).then(
                      (key) => {
                        setNewKey({ tenant: p.id, key });
                        void props.api.tenants().then(setS);
                      },
                      (e: Error) => setErr(errorText(e)),
                    );
                  }}
                >
                  {t('settings.rotate')}
                </button>{' '}
                <button type="button" class="danger" data-testid={`delete-${p.id}`} onClick={() => remove(p.id)}>
                  {t('settings.delete')}
                </button>
              </td>
            </tr>,
            deleted?.tenant === p.id && deleted.error && (
              <tr key={`${p.id}-error`}>
                <td colSpan={7}>
                  <span class="field-error" role="alert" data-testid={`delete-error-${p.id}`}>
                    {deleted.error}
                  </span>{' '}
                  <button type="button" aria-label={t('form.close')} onClick={() => setDeleted(null)}>
                    ×
                  </button>
                </td>
              </tr>
            ),
          ])}
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
          onSave={async (p) => {
            const next = await props.api.saveTenant(p);
            setS(next);
            setEditing(null);
          }}
        />
      )}
      {newKey && (
        <Dialog title={t('settings.newKey', { tenant: newKey.tenant })} onClose={() => setNewKey(null)} testid="new-key-dialog">
          <p class="muted small">{t('settings.newKeyOnce')}</p>
          <pre data-testid="new-key">{newKey.key}</pre>
          <div class="buttons">
            <button type="button" onClick={() => void navigator.clipboard?.writeText(newKey.key).catch(() => {})}>
              {t('connect.copy')}
            </button>
            <button type="button" class="primary" onClick={() => setNewKey(null)}>
              {t('form.close')}
            </button>
          </div>
        </Dialog>
      )}
    </section>
  );
}

function TenantForm(props: { p: TenantPolicy; isNew: boolean; onClose: () => void; onSave: (p: TenantPolicy) => Promise<void> }) {
  const [f, setF] = useState({
    id: props.p.id,
    budget: String(props.p.budget_units),
    conc: String(props.p.max_concurrent),
    pm: String(props.p.per_minute),
    ph: String(props.p.per_hour),
    models: props.p.allowed_models.join(', '),
  });
  const [err, setErr] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
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
            setErr(t('settings.errNumbers'));
            return;
          }
          setBusy(true);
          try {
            await props.onSave({
              id: f.id.trim(),
              budget_units: nums[0]!,
              max_concurrent: nums[1]!,
              per_minute: nums[2]!,
              per_hour: nums[3]!,
              allowed_models: f.models.split(/[,\s]+/).filter(Boolean),
            });
          } catch (x) {
            setErr(errorText(x));
          } finally {
            setBusy(false);
          }
        }}
      >
        {field('id', t('audit.tenant'), !props.isNew)}
        {field('budget', t('overview.budget'))}
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
