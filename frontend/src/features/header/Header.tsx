import { langs, t, type Key, type Lang, type ThemePref } from '../../lib/i18n';
import { useStore, useView, shallow } from '../../state/use';
import { Uptime } from '../../ui/Ago';

export type Tab = 'connect' | 'overview' | 'quota' | 'audit' | 'settings';
export const tabs: readonly Tab[] = ['connect', 'overview', 'quota', 'audit', 'settings'];

const langNames: Record<Lang, string> = { en: 'English', 'zh-CN': '简体中文' };

export function Header(props: { tab: Tab; onTab: (t: Tab) => void }) {
  const v = useView((v) => ({ state: v.state, status: v.status }), shallow);
  const s = v.state;
  return (
    <header class="top">
      <div class="top-row">
        <div class="brand">
          <strong>quotagate</strong>
          <span class="muted" data-testid="version">
            {s?.version ?? '—'}
          </span>
          {s?.demo && (
            <span class="badge warn" data-testid="demo-badge" title={t('header.demoTitle')}>
              {t('header.demo')}
            </span>
          )}
        </div>
        <nav class="tabs" aria-label="sections">
          {tabs.map((k) => (
            <button
              type="button"
              key={k}
              class={props.tab === k ? 'tab current' : 'tab'}
              aria-current={props.tab === k ? 'page' : undefined}
              data-testid={`nav-${k}`}
              onClick={() => props.onTab(k)}
            >
              {t(`nav.${k}` as Key)}
            </button>
          ))}
        </nav>
        <span class={`conn conn-${v.status}`} title={t('conn.title')}>
          <span class="dot" aria-hidden="true" />
          <span data-testid="conn-status" data-value={v.status}>
            {t(`conn.${v.status}` as Key)}
          </span>
        </span>
        <Switches />
      </div>
      <StatusLine />
    </header>
  );
}

/** Switches are the language and theme choices; both apply in place. */
function Switches() {
  const store = useStore();
  const v = useView((v) => ({ lang: v.lang, theme: v.theme }), shallow);
  return (
    <div class="switches">
      <label>
        <span class="sr">{t('header.lang')}</span>
        <select
          data-testid="lang-switch"
          aria-label={t('header.lang')}
          value={v.lang}
          onChange={(e) => store.setLanguage((e.target as HTMLSelectElement).value as Lang)}
        >
          {langs.map((l) => (
            <option key={l} value={l} lang={l}>
              {langNames[l]}
            </option>
          ))}
        </select>
      </label>
      <label>
        <span class="sr">{t('header.theme')}</span>
        <select
          data-testid="theme-switch"
          aria-label={t('header.theme')}
          value={v.theme}
          onChange={(e) => store.setTheme((e.target as HTMLSelectElement).value as ThemePref)}
        >
          {(['system', 'light', 'dark'] as const).map((p) => (
            <option key={p} value={p}>
              {t(`theme.${p}`)}
            </option>
          ))}
        </select>
      </label>
    </div>
  );
}

/**
 * StatusLine is the server's facts on a line of their own under the title:
 * beside the tabs and the switches they did not fit, and their labels were
 * cut ("upti 7s"). Each label is whole; only a long data dir is shortened,
 * and its tooltip has it all.
 */
function StatusLine() {
  const v = useView((v) => ({ state: v.state, receivedAt: v.receivedAt }), shallow);
  const s = v.state;
  return (
    <dl class="status-line" data-testid="status-line">
      <div>
        <dt>{t('header.uptime')}</dt>
        <dd data-testid="uptime">
          <Uptime seconds={s ? s.uptime_seconds : null} receivedAt={v.receivedAt} />
        </dd>
      </div>
      <div>
        <dt>{t('header.addr')}</dt>
        <dd data-testid="addr">{s?.addr ?? '—'}</dd>
      </div>
      <div>
        <dt>{t('header.dataDir')}</dt>
        <dd data-testid="data-dir" class="path" title={s?.data_dir}>
          {s?.data_dir ?? '—'}
        </dd>
      </div>
      <div>
        <dt>{t('header.meter')}</dt>
        <dd data-testid="meter">{s?.meter ?? '—'}</dd>
      </div>
    </dl>
  );
}
