import { useEffect, useState } from 'preact/hooks';
import { GLOBAL, type Store } from './state/store';
import { StoreContext, shallow, useStore, useView } from './state/use';
import { ClockContext, stillClock, ticker, useNow, type Clock } from './state/clock';
import { Header, type Tab } from './features/header/Header';
import { Overview } from './features/overview/Overview';
import { Holds } from './features/overview/Holds';
import { Runs } from './features/overview/Runs';
import { GatesTable } from './features/overview/GatesTable';
import { RoutesTable } from './features/overview/RoutesTable';
import { Quota } from './features/quota/Quota';
import { SnapshotsList } from './features/quota/SnapshotsList';
import { Audit } from './features/audit/Audit';
import { Connect } from './features/connect/Connect';
import { Settings } from './features/settings/Settings';
import { Note } from './ui/Note';
import { WebhookBanner } from './features/periods/WebhookBanner';
import { LedgerBanner } from './features/header/LedgerBanner';
import { applyTheme, t } from './lib/i18n';
import { time } from './lib/format';

/**
 * App is the page around one store. clock and tick set the page's clock
 * (tests pass a fixed time and no tick); tab opens a given tab.
 */
export function App(props: { store: Store; clock?: () => number; tick?: boolean; tab?: Tab }) {
  const [clock] = useState<Clock>(() => (props.tick ?? true ? ticker(props.clock) : stillClock(props.clock ?? Date.now)));
  return (
    <StoreContext.Provider value={props.store}>
      <ClockContext.Provider value={clock}>
        <Page tab={props.tab} />
      </ClockContext.Provider>
    </StoreContext.Provider>
  );
}

/** useSystemTheme applies the theme, following the system's while the choice is "system". */
function useSystemTheme() {
  const theme = useView((v) => v.theme);
  useEffect(() => {
    applyTheme(theme);
    if (theme !== 'system' || typeof matchMedia !== 'function') return;
    const mq = matchMedia('(prefers-color-scheme: dark)');
    const on = () => applyTheme('system');
    mq.addEventListener?.('change', on);
    return () => mq.removeEventListener?.('change', on);
  }, [theme]);
}

/** StaleSince says since when the data on the page may be out of date: the last state's arrival. */
function StaleSince() {
  const receivedAt = useView((v) => v.receivedAt);
  return <>{t('stale.banner', { time: time(new Date(receivedAt).toISOString(), useNow(60_000)) })}</>;
}

function Page(props: { tab?: Tab }) {
  const store = useStore();
  // The page re-renders on a language switch (every sentence comes from t()),
  // but nothing remounts: open dialogs and half-typed forms stay as they are.
  // A pushed state re-renders only the panels whose part of it changed.
  const v = useView((v) => ({ lang: v.lang, status: v.status, loaded: v.state !== null, noRuns: v.state?.runs.length === 0 }), shallow);
  const [tab, setTab] = useState<Tab | null>(props.tab ?? null);
  useSystemTheme();
  useEffect(() => {
    // The window may have read it before the first paint; the store asks once.
    store.connectInfo().catch(() => {});
  }, [store]);

  // A new user (no runs yet) starts at Connect; everyone else at the
  // overview. Decided once, at the first state: a run arriving later must not
  // move the page away from what the operator is reading.
  const shown: Tab = tab ?? (v.noRuns ? 'connect' : 'overview');
  useEffect(() => {
    if (tab === null && v.loaded) setTab(shown);
  }, [tab === null && v.loaded]);
  const stale = v.status === 'reconnecting' && v.loaded;
  return (
    <div class="page" lang={v.lang}>
      <Header tab={shown} onTab={setTab} />
      <Note scope={GLOBAL} testid="error-banner" />
      <LedgerBanner />
      <WebhookBanner />
      {stale && (
        <div class="banner stale-banner" role="status" data-testid="stale">
          <StaleSince />
        </div>
      )}
      {!v.loaded ? (
        <p class="loading">{t('app.loading')}</p>
      ) : (
        <main class={stale ? 'stale' : ''} aria-busy={stale}>
          {shown === 'connect' && <Connect />}
          {shown === 'overview' && (
            <>
              <Overview />
              <Holds />
              <Runs />
              <GatesTable />
              <RoutesTable />
            </>
          )}
          {shown === 'quota' && (
            <>
              <Quota />
              <SnapshotsList />
            </>
          )}
          {shown === 'settings' && <Settings />}
          {shown === 'audit' && <Audit />}
        </main>
      )}
    </div>
  );
}
