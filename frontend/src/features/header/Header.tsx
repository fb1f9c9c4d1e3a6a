import type { ComponentChildren } from 'preact';
import { langs, t, type Key, type Lang, type ThemePref } from '../../lib/i18n';
import { useStore, useView, shallow } from '../../state/use';
import { Uptime } from '../../ui/Ago';
import { Choice } from '../../ui/Choice';
import { useClockShift } from '../periods/clockShift';

export type Tab = 'connect' | 'overview' | 'quota' | 'audit' | 'settings';
export const tabs: readonly Tab[] = ['connect', 'overview', 'quota', 'audit', 'settings'];

const langNames: Record<Lang, string> = { en: 'English', 'zh-CN': '简体中文' };
const themes: readonly ThemePref[] = ['system', 'light', 'dark'];

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
      <Choice label={t('header.lang')} hidden testid="lang-switch" value={v.lang} options={langs} name={(l) => langNames[l]} lang={(l) => l} onChoose={(l) => store.setLanguage(l)} />
      <Choice label={t('header.theme')} hidden testid="theme-switch" value={v.theme} options={themes} name={(p) => t(`theme.${p}`)} onChoose={(p) => store.setTheme(p)} />
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
  const shift = useClockShift();
  return (
    <dl class="status-line" data-testid="status-line">
      <Fact label="header.uptime" testid="uptime">
        <Uptime seconds={s ? s.uptime_seconds : null} receivedAt={v.receivedAt} />
      </Fact>
      <Fact label="header.addr" testid="addr">{s?.addr ?? '—'}</Fact>
      <Fact label="header.dataDir" testid="data-dir" class="path" title={s?.data_dir}>
        {s?.data_dir ?? '—'}
      </Fact>
      <Fact label="header.meter" testid="meter">{s?.meter ?? '—'}</Fact>
      {shift && (
        <Fact label="header.clock" testid="clock-offset" class="badge warn" title={shift.title}>
          {shift.text}
        </Fact>
      )}
    </dl>
  );
}

/** Fact is one labelled figure of the status line. */
function Fact(props: { label: Key; testid: string; class?: string; title?: string; children: ComponentChildren }) {
  return (
    <div>
      <dt>{t(props.label)}</dt>
      <dd data-testid={props.testid} class={props.class} title={props.title}>
        {props.children}
      </dd>
    </div>
  );
}
