import { render } from 'preact';
import './style.css';
import { App } from './app';
import { connection, exportAuditCSV, wailsApp } from './lib/desktop';
import { storeFor, GLOBAL } from './state/store';
import { pickLang, setLang, storedLang, t } from './lib/i18n';

async function boot() {
  const root = document.getElementById('app')!;
  const desktop = wailsApp() !== null;
  // In a browser the browser's languages decide; in the window the system
  // locale does (the server shares the window's LANG and says it in
  // /admin/api/connect), unless the operator chose.
  setLang(pickLang({ stored: storedLang(), browser: desktop ? [] : navigator.languages }));
  try {
    const conn = await connection();
    const store = storeFor(conn, (api, q) => exportAuditCSV(api, q), { followSystemLocale: desktop });
    if (!conn.token) store.fail(GLOBAL, t('app.noToken'));
    if (desktop && !storedLang()) {
      // Before the first paint; the store keeps the answer for the Connect
      // panel, and asks again when the panel opens if this failed.
      await store.connectInfo().catch(() => {});
    }
    render(<App store={store} />, root);
    store.start();
  } catch (err) {
    root.textContent = `quotagate dashboard could not start: ${(err as Error).message}`;
  }
}

void boot();
