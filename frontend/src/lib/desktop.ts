// The only module that touches the Wails bindings (window.go). It
// feature-detects them, so the same build runs in the window and in a browser.

import { auditParams, type Api, type AuditQuery, type Conn } from './api';

/** The bound methods of app.App this dashboard calls (Go side: app/app.go, app/desktop.go). */
export interface WailsApp {
  Connection(): Promise<Conn>;
  /** query: the audit filter as a URL query string (from, to, tenant, kind, run, text). */
  SaveAuditCSV?(query: string): Promise<string | void>;
  /** Notify shows a desktop notification (app/notify.go); see notify.ts. */
  Notify?(title: string, body: string, tag: string): Promise<void>;
}

declare global {
  interface Window {
    go?: { app?: { App?: WailsApp } };
  }
}

/** The few window members used here, so tests can pass a stand-in. */
export interface Host {
  go?: { app?: { App?: WailsApp } };
  location: { origin: string; hash: string; pathname: string; search: string };
  history: { replaceState(data: unknown, unused: string, url?: string): void };
  sessionStorage?: Pick<Storage, 'getItem' | 'setItem'>;
}

const tokenKey = 'quotagate.admin-token';

/** wailsApp returns the bound App inside the desktop window, or null in a browser. */
export function wailsApp(host: Host = window): WailsApp | null {
  const app = host.go?.app?.App;
  return app && typeof app.Connection === 'function' ? app : null;
}

/**
 * connection finds the backend. In Wails the binding says where it listens.
 * In a browser the API is this page's origin and the token comes from the
 * URL fragment "#token=…" printed by `quotagate serve`; the fragment is then
 * removed from the address bar (so it is not shared in a screenshot) and kept
 * in sessionStorage so a reload of this tab still works.
 */
export async function connection(host: Host = window): Promise<Conn> {
  const app = wailsApp(host);
  if (app) {
    const c = await app.Connection();
    if (!c || typeof c.url !== 'string' || typeof c.token !== 'string') {
      throw new Error('the desktop app returned no connection');
    }
    return { url: c.url, token: c.token };
  }
  const fromHash = new URLSearchParams(host.location.hash.replace(/^#/, '')).get('token');
  let token = fromHash ?? '';
  if (fromHash !== null) {
    try {
      host.sessionStorage?.setItem(tokenKey, fromHash);
    } catch {
      // storage may be disabled; the token still works for this page load
    }
    host.history.replaceState(null, '', host.location.pathname + host.location.search);
  } else {
    try {
      token = host.sessionStorage?.getItem(tokenKey) ?? '';
    } catch {
      token = '';
    }
  }
  return { url: host.location.origin, token };
}

/** Outcome of an export, for the notice line. */
export type ExportResult = { kind: 'saved'; path: string } | { kind: 'downloaded'; name: string } | { kind: 'cancelled' };

export interface DownloadDeps {
  createObjectURL(b: Blob): string;
  revokeObjectURL(u: string): void;
  click(href: string, name: string): void;
}

const browserDownload: DownloadDeps = {
  createObjectURL: (b) => URL.createObjectURL(b),
  revokeObjectURL: (u) => URL.revokeObjectURL(u),
  click(href, name) {
    const a = document.createElement('a');
    a.href = href;
    a.download = name;
    a.rel = 'noopener';
    document.body.appendChild(a);
    a.click();
    a.remove();
  },
};

/**
 * exportAuditCSV saves the audit log. Inside Wails a native save dialog is
 * used (a webview ignores <a download>); in a browser the CSV is fetched with
 * the token and handed to the browser as a download.
 */
export async function exportAuditCSV(
  api: Api,
  q: AuditQuery,
  host: Host = window,
  dl: DownloadDeps = browserDownload,
): Promise<ExportResult> {
  const app = wailsApp(host);
  if (app?.SaveAuditCSV) {
    const path = await app.SaveAuditCSV(auditParams(q).toString());
    return path ? { kind: 'saved', path } : { kind: 'cancelled' };
  }
  const { blob, name } = await api.auditCSV(q);
  const href = dl.createObjectURL(blob);
  try {
    dl.click(href, name);
  } finally {
    // Revoke after the click has been dispatched; the download keeps its copy.
    setTimeout(() => dl.revokeObjectURL(href), 0);
  }
  return { kind: 'downloaded', name };
}
