import { useEffect, useState } from 'preact/hooks';
import type { Store, View } from './lib/store';
import { Header } from './components/Header';
import { TenantsTable } from './components/TenantsTable';
import { HoldsTable } from './components/HoldsTable';
import { RunsTable } from './components/RunsTable';
import { GatesTable } from './components/GatesTable';
import { QuotaTable } from './components/QuotaTable';
import { SnapshotsList } from './components/SnapshotsList';
import { ExportBar } from './components/ExportBar';
import { ErrorBanner, Notice } from './components/Messages';

function useView(store: Store): View {
  const [view, setView] = useState(store.get());
  useEffect(() => {
    setView(store.get());
    return store.subscribe(setView);
  }, [store]);
  return view;
}

/** useNow ticks once a second so uptime and "ago" stay current between pushes. */
function useNow(clock: () => number, tick: boolean): number {
  const [now, setNow] = useState(clock());
  useEffect(() => {
    if (!tick) return;
    const t = setInterval(() => setNow(clock()), 1000);
    return () => clearInterval(t);
  }, [clock, tick]);
  return now;
}

export function App(props: { store: Store; clock?: () => number; tick?: boolean }) {
  const { store } = props;
  const view = useView(store);
  const nowMs = useNow(props.clock ?? Date.now, props.tick ?? true);
  const now = new Date(nowMs);
  const s = view.state;
  const uptime = s ? s.uptime_seconds + Math.max(0, (nowMs - view.receivedAt) / 1000) : null;

  return (
    <div class="page">
      <Header state={s} status={view.status} uptimeSeconds={uptime} />
      <ErrorBanner error={view.error} onDismiss={() => store.dismissError()} />
      <Notice notice={view.notice} />
      {!s ? (
        <p class="loading">Connecting to quotagate…</p>
      ) : (
        <main>
          <TenantsTable tenants={s.tenants} />
          <HoldsTable holds={s.holds} actions={store} busy={view.busy} now={now} />
          <div class="two">
            <GatesTable gates={s.gates} />
            <ExportBar tenants={s.tenants} actions={store} busy={view.busy.has('export')} />
          </div>
          <QuotaTable quota={s.quota} actions={store} busy={view.busy} now={now} />
          <RunsTable runs={s.runs} actions={store} busy={view.busy} now={now} />
          <SnapshotsList snapshots={s.snapshots} now={now} />
        </main>
      )}
    </div>
  );
}
