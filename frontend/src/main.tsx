import { render } from 'preact';
import './style.css';
import { App } from './app';
import { connection, exportAuditCSV } from './lib/desktop';
import { storeFor } from './lib/store';

async function boot() {
  const root = document.getElementById('app')!;
  try {
    const conn = await connection();
    const store = storeFor(conn, (api, q) => exportAuditCSV(api, q));
    if (!conn.token) store.fail('No admin token: open the dashboard with the URL that `quotagate serve` printed (it ends in #token=…).');
    render(<App store={store} />, root);
    store.start();
  } catch (err) {
    root.textContent = `quotagate dashboard could not start: ${(err as Error).message}`;
  }
}

void boot();
