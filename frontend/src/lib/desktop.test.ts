import { describe, expect, it } from 'vitest';
import { connection, exportAuditCSV, wailsApp, type Host, type WailsApp } from './desktop';
import type { Api } from './api';

function browserHost(hash: string, stored: Record<string, string> = {}) {
  const replaced: string[] = [];
  const store = { ...stored };
  const host: Host = {
    location: { origin: 'http://127.0.0.1:8787', hash, pathname: '/', search: '?x=1' },
    history: { replaceState: (_d, _u, url) => replaced.push(url ?? '') },
    sessionStorage: {
      getItem: (k) => store[k] ?? null,
      setItem: (k, v) => {
        store[k] = v;
      },
    },
  };
  return { host, replaced, store };
}

describe('connection', () => {
  it('in a browser: origin + #token, then the fragment leaves the address bar', async () => {
    const { host, replaced } = browserHost('#token=abc%2B123');
    expect(wailsApp(host)).toBeNull();
    expect(await connection(host)).toEqual({ url: 'http://127.0.0.1:8787', token: 'abc+123' });
    expect(replaced).toEqual(['/?x=1']);
  });

  it('a reload without the fragment reuses the token kept for this tab', async () => {
    const first = browserHost('#token=keep-me');
    await connection(first.host);
    const again = browserHost('', first.store);
    expect(await connection(again.host)).toEqual({ url: 'http://127.0.0.1:8787', token: 'keep-me' });
    expect(again.replaced).toEqual([]);
  });

  it('no fragment and nothing stored: empty token (the UI says how to get one)', async () => {
    const { host } = browserHost('');
    expect((await connection(host)).token).toBe('');
  });

  it('inside Wails: the binding decides, location is ignored', async () => {
    const { host, replaced } = browserHost('#token=browser');
    const app: WailsApp = { Connection: async () => ({ url: 'http://127.0.0.1:9999', token: 'wails-tok' }) };
    host.go = { app: { App: app } };
    expect(wailsApp(host)).toBe(app);
    expect(await connection(host)).toEqual({ url: 'http://127.0.0.1:9999', token: 'wails-tok' });
    expect(replaced).toEqual([]);
  });

  it('a window.go without the App binding counts as a browser', () => {
    const { host } = browserHost('');
    host.go = { app: {} };
    expect(wailsApp(host)).toBeNull();
  });
});

describe('exportAuditCSV', () => {
  const csv = new Blob(['seq,at\r\n'], { type: 'text/csv' });
  const api = { auditCSV: async () => ({ blob: csv, name: 'quotagate-audit_tenant-a_20261101-0000.csv' }) } as unknown as Api;

  it('in a browser: fetches the CSV and clicks a download link with the name the server gave', async () => {
    const { host } = browserHost('');
    const clicks: [string, string][] = [];
    const made: Blob[] = [];
    const r = await exportAuditCSV(api, { tenant: 'tenant-a', from: '2026-11-01' }, host, {
      createObjectURL: (b) => {
        made.push(b);
        return 'blob:1';
      },
      revokeObjectURL: () => {},
      click: (href, name) => clicks.push([href, name]),
    });
    expect(made).toEqual([csv]);
    expect(clicks).toEqual([['blob:1', 'quotagate-audit_tenant-a_20261101-0000.csv']]);
    expect(r).toEqual({ kind: 'downloaded', name: 'quotagate-audit_tenant-a_20261101-0000.csv' });
  });

  it('inside Wails: the native save dialog binding is used', async () => {
    const { host } = browserHost('');
    const calls: string[] = [];
    host.go = {
      app: {
        App: {
          Connection: async () => ({ url: '', token: '' }),
          SaveAuditCSV: async (query) => {
            calls.push(query);
            return calls.length === 1 ? '/root/audit.csv' : '';
          },
        },
      },
    };
    expect(await exportAuditCSV(api, { from: '2026-11-01', kind: 'reconcile', text: 'a b' }, host)).toEqual({ kind: 'saved', path: '/root/audit.csv' });
    expect(await exportAuditCSV(api, {}, host)).toEqual({ kind: 'cancelled' });
    // The window gets exactly the filter the browser would send.
    expect(calls).toEqual(['from=2026-11-01&kind=reconcile&text=a+b', '']);
  });

});
