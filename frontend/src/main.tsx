import { render } from 'preact';
import './style.css';
import { App } from './app';
import { connection, exportAuditCSV, wailsApp } from './lib/desktop';
import { storeFor, GLOBAL } from './lib/store';
import { pickLang, setLang, storedLang, t } from './lib/i18n';

async function boot() {
  const root = document.getElementById('app')!;
  const desktop = wailsApp() !== null;
  // In a browser the browser's languages decide; in the window the system
  // locale does (App reads it from the server, which shares the window's LANG).
  setLang(pickLang({ stored: storedLang(), browser: desktop ? [] : navigator.languages }));
  try {
    const conn = await connection();
    const store = storeFor(conn, (api, q) => exportAuditCSV(api, q));
    if (!conn.token) store.fail(GLOBAL, t('app.noToken'));
    if (desktop && !storedLang()) {
      // The window follows the system locale (LANG; C means English), read
      // by the server, before the first paint.
      try {
        setLang(pickLang({ system: (await store.api.connect()).locale ?? '' }));
      } catch {
        // keep English; App retries when it loads the Connect panel
      }
    }
    render(<App store={store} desktop={desktop} />, root);
    store.start();
  } catch (err) {
    root.textContent = `quotagate dashboard could not start: ${(err as Error).message}`;
  }
}

void boot();
