import { useEffect, useRef, useState } from 'preact/hooks';
import type { Store, View } from './lib/store';
import { GLOBAL } from './lib/store';
import type { ConnectInfo } from './lib/api';
import { Header, type Tab } from './components/Header';
import { Overview } from './components/Overview';
import { Holds } from './components/Holds';
import { Runs } from './components/Runs';
import { GatesTable } from './components/GatesTable';
import { Quota } from './components/Quota';
import { SnapshotsList } from './components/SnapshotsList';
import { Audit } from './components/Audit';
import { Connect } from './components/Connect';
import { Note } from './components/Note';
import { Settings } from './components/Settings';
import { deliver, events, loadPrefs, type NotifyPrefs } from './lib/notify';
import type { State } from './lib/types';
import { applyTheme, lang, pickLang, rememberLang, rememberTheme, setLang, storedLang, storedTheme, t, type Lang, type ThemePref } from './lib/i18n';
import { time } from './lib/format';
import { errorText } from './lib/errors';

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
    const id = setInterval(() => setNow(clock()), 1000);
    return () => clearInterval(id);
  }, [clock, tick]);
  return now;
}

export function App(props: { store: Store; clock?: () => number; tick?: boolean; desktop?: boolean; tab?: Tab }) {
  const { store } = props;
  const view = useView(store);
  const nowMs = useNow(props.clock ?? Date.now, props.tick ?? true);
  const now = new Date(nowMs);
  const s = view.state;
  const uptime = s ? s.uptime_seconds + Math.max(0, (nowMs - view.receivedAt) / 1000) : null;
  const [lng, setLng] = useState<Lang>(lang());
  const [theme, setTheme] = useState<ThemePref>(storedTheme());
  const [tab, setTab] = useState<Tab | null>(props.tab ?? null);
  const [info, setInfo] = useState<ConnectInfo | null>(null);
  const [infoErr, setInfoErr] = useState<string | null>(null);
  const [prefs, setPrefs] = useState<NotifyPrefs>(loadPrefs());
  const prevState = useRef<State | null>(null);

  // Desktop notifications for what became true since the previous state.
  useEffect(() => {
    if (!s) return;
    void deliver(events(prevState.current, s, prefs));
    prevState.current = s;
  }, [s]);

  useEffect(() => {
    applyTheme(theme);
    if (theme !== 'system' || typeof matchMedia !== 'function') return;
    const mq = matchMedia('(prefers-color-scheme: dark)');
    const on = () => applyTheme('system');
    mq.addEventListener?.('change', on);
    return () => mq.removeEventListener?.('change', on);
  }, [theme]);

  useEffect(() => {
    store.api.connect().then(
      (i) => {
        setInfo(i);
        // In the window the system locale (LANG) decides, unless the operator chose.
        if (props.desktop && !storedLang()) {
          const l = pickLang({ system: i.locale ?? '' });
          setLang(l);
          setLng(l);
        }
      },
      (e: Error) => setInfoErr(errorText(e)),
    );
  }, [store]);

  // A new user (no runs yet) starts at Connect; everyone else at the
  // overview. Decided once, at the first state: a run arriving later must not
  // move the page away from what the operator is reading.
  const shown: Tab = tab ?? (s && s.runs.length === 0 ? 'connect' : 'overview');
  useEffect(() => {
    if (tab === null && s) setTab(shown);
  }, [tab === null && s !== null]);
  const stale = view.status === 'reconnecting' && s !== null;
  const changeLang = (l: Lang) => {
    setLang(l);
    rememberLang(l);
    setLng(l);
  };
  return (
    <div class="page" lang={lng} key={lng}>
      <Header
        state={s}
        status={view.status}
        uptimeSeconds={uptime}
        lang={lng}
        onLang={changeLang}
        theme={theme}
        onTheme={(p) => {
          rememberTheme(p);
          setTheme(p);
        }}
        tab={shown}
        onTab={setTab}
      />
      <Note notes={view.notes} scope={GLOBAL} actions={store} testid="error-banner" />
      {stale && (
        <div class="banner stale-banner" role="status" data-testid="stale">
          {t('stale.banner', { time: time(new Date(view.receivedAt).toISOString(), now) })}
        </div>
      )}
      {!s ? (
        <p class="loading">{t('app.loading')}</p>
      ) : (
        <main class={stale ? 'stale' : ''} aria-busy={stale}>
          {shown === 'connect' && <Connect info={info} error={infoErr} />}
          {shown === 'overview' && (
            <>
              <Overview tenants={s.tenants} runs={s.runs} now={now} />
              <Holds holds={s.holds} runs={s.runs} tenants={s.tenants} actions={store} busy={view.busy} notes={view.notes} now={now} />
              <Runs runs={s.runs} actions={store} busy={view.busy} notes={view.notes} now={now} />
              <GatesTable gates={s.gates} />
            </>
          )}
          {shown === 'quota' && (
            <>
              <Quota quota={s.quota} snapshots={s.snapshots} actions={store} busy={view.busy} notes={view.notes} now={now} />
              <SnapshotsList snapshots={s.snapshots} now={now} />
            </>
          )}
          {shown === 'settings' && <Settings prefs={prefs} onPrefs={setPrefs} api={store.api} />}
          {shown === 'audit' && (
            <Audit api={store.api} tenants={s.tenants} actions={store} busy={view.busy.has('export')} notes={view.notes} tick={view.receivedAt} now={now} />
          )}
        </main>
      )}
    </div>
  );
}
