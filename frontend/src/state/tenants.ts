// The Settings tab's tenants in the store: the list and the values that
// differ from the config file, and the outcome of each change made here.

import { ApiError, type TenantPolicy, type TenantSettings, type WriteBack } from '../lib/api';
import { errorKey, errorText } from '../lib/errors';
import { t } from '../lib/i18n';
import type { Core } from './store';
import { errorNote, said, type Note } from './notes';

export interface TenantsView {
  data: TenantSettings | null;
  /** the latest failure of a read or a change without a place of its own */
  error: Note | null;
  /** the config file just rewritten, and what became of keys */
  written: WriteBack | null;
  /** a rotated key, shown once */
  newKey: { tenant: string; key: string } | null;
  /** the outcome of a delete: a refusal stands under that tenant's row, a success above the table */
  deleted: { tenant: string; note: Note } | null;
}

export const emptyTenants: TenantsView = { data: null, error: null, written: null, newKey: null, deleted: null };

/** The notice scope of the tenant form's server errors. */
export const FORM = 'tenant-form';

export class TenantsSlice {
  private readonly core: Core;

  constructor(core: Core) {
    this.core = core;
  }

  private patch(p: Partial<TenantsView>) {
    this.core.set({ tenants: { ...this.core.get().tenants, ...p } });
  }

  private failed(err: unknown) {
    this.patch({ error: errorNote(err) });
  }

  /** load reads the tenants (each time the tab opens: the file may have been reloaded). */
  async load() {
    try {
      this.patch({ data: await this.core.api.tenants() });
    } catch (err) {
      this.failed(err);
    }
  }

  /** save creates or edits a tenant; a refusal is the form's notice (scope FORM). */
  async save(p: TenantPolicy): Promise<boolean> {
    if (!this.core.busy(FORM, true)) return false;
    this.core.note(FORM, null);
    try {
      this.patch({ data: await this.core.api.saveTenant(p) });
      return true;
    } catch (err) {
      this.core.note(FORM, errorNote(err));
      return false;
    } finally {
      this.core.busy(FORM, false);
    }
  }

  /** rotate makes a new key for the tenant and shows it once. */
  async rotate(id: string) {
    try {
      const key = await this.core.api.rotateKey(id);
      this.patch({ newKey: { tenant: id, key } });
    } catch (err) {
      this.failed(err);
      return;
    }
    await this.core.api.tenants().then((data) => this.patch({ data }), () => {});
  }

  /** remove deletes a tenant; refused in words while it has runs in flight or units held. */
  async remove(id: string) {
    try {
      const next = await this.core.api.deleteTenant(id);
      const inFile = next.overrides.some((o) => o.tenant === id && o.field === 'tenant');
      this.patch({ data: next, deleted: { tenant: id, note: said('ok', () => t(inFile ? 'settings.deletedInFile' : 'settings.deleted', { tenant: id })) } });
    } catch (err) {
      // A refusal the catalogue knows says it was not deleted, and why; the server's own words get the lead-in.
      const render = () =>
        err instanceof ApiError && errorKey(err) ? errorText(err) : `${t('settings.deleteRefused', { tenant: id })} ${errorText(err)}`;
      this.patch({ deleted: { tenant: id, note: said('error', render) } });
    }
  }

  /** discard drops the overrides: the tenants are the config file's again. */
  async discard() {
    try {
      this.patch({ data: await this.core.api.discardTenants() });
    } catch (err) {
      this.failed(err);
    }
  }

  /** writeBack rewrites the config file with the overrides. */
  async writeBack() {
    if (!this.core.busy('write-back', true)) return;
    try {
      const r = await this.core.api.writeBack();
      this.patch({ data: r.settings, written: r });
    } catch (err) {
      this.failed(err);
    } finally {
      this.core.busy('write-back', false);
    }
  }

  dismissWritten() {
    this.patch({ written: null });
  }

  dismissNewKey() {
    this.patch({ newKey: null });
  }

  dismissDeleted() {
    this.patch({ deleted: null });
  }
}
