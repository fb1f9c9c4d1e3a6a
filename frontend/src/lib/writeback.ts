// A write-back note (admin.WriteBackNote) in the page's language.

import type { WriteBackNote } from './api';
import { catalogues, t, type Key } from './i18n';

/** noteText says a write-back note by its kind; an unknown kind keeps the server's words. */
export function noteText(n: WriteBackNote): string {
  const key = `writeBack.note.${n.kind}`;
  if (!n.tenant || !Object.prototype.hasOwnProperty.call(catalogues.en, key)) return n.text;
  return t(key as Key, { tenant: n.tenant });
}
