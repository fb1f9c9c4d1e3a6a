// errorText says an admin error in the page's language: by the server's
// reason (ledger/reason.go), else by its code, from the i18n catalogue with
// the error's numbers formatted for the locale. An error the catalogue does
// not know — a generic code such as invalid_request or conflict with no
// reason, a config validation sentence — keeps the server's own words.

import { ApiError, type ErrorParams } from './api';
import { catalogues, t, type Key } from './i18n';
import { units } from './format';

function has(key: string): key is Key {
  return Object.prototype.hasOwnProperty.call(catalogues.en, key);
}

function placeholders(key: Key): string[] {
  return (catalogues.en[key].match(/\{(\w+)\}/g) ?? []).map((m) => m.slice(1, -1));
}

/** say renders key if every placeholder it names has a value; null otherwise. */
function say(key: string, params: ErrorParams): string | null {
  if (!has(key)) return null;
  const out: Record<string, string> = {};
  for (const name of placeholders(key)) {
    const v = params[name];
    if (v === undefined || v === '') return null;
    out[name] = typeof v === 'number' ? units(v) : v;
  }
  return t(key, out);
}

/** errorKey is the catalogue key an error is rendered from, or null when it keeps the server's words. */
export function errorKey(e: ApiError): Key | null {
  const candidates = [e.reason ? `err.${e.reason}` : '', e.code ? `err.code.${e.code}` : '', clientKey(e)];
  for (const k of candidates) if (k && say(k, paramsOf(e)) !== null) return k as Key;
  return null;
}

function clientKey(e: ApiError): string {
  if (e.code || e.reason) return '';
  if (e.status === 0) return 'err.unreachable';
  if (e.status === 401 || e.status === 403 || e.status === 404) return `err.http${e.status}`;
  return 'err.http';
}

function paramsOf(e: ApiError): ErrorParams {
  // upstream_error's detail is the provider's own sentence.
  return e.code === 'upstream_error' && e.params.detail === undefined ? { ...e.params, detail: e.message } : e.params;
}

/** errorText is the sentence for err in the current language. */
export function errorText(err: unknown): string {
  if (err instanceof ApiError) {
    const k = errorKey(err);
    if (k) return say(k, paramsOf(err)) ?? err.message;
    return err.message;
  }
  if (err instanceof Error) return err.message;
  return String(err);
}
