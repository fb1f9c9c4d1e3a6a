// The dashboard's two languages. Every sentence a person reads comes from
// the catalogue below through t(); formatters in format.ts read the same
// current language, so a switch re-renders numbers and dates too.

import { en } from './i18n.en';
import { zhCN } from './i18n.zh';

export type Lang = 'en' | 'zh-CN';
export const langs: readonly Lang[] = ['en', 'zh-CN'];
export type Key = keyof typeof en;
export type Catalogue = Record<Key, string>;

export const catalogues: Record<Lang, Catalogue> = { en, 'zh-CN': zhCN };

let current: Lang = 'en';

export function lang(): Lang {
  return current;
}

/** setLang switches the language and sets <html lang>; the caller re-renders. */
export function setLang(l: Lang) {
  current = l;
  if (typeof document !== 'undefined') document.documentElement.lang = l;
}

/** MISSING marks a key the current catalogue lacks, so a test (and a person) can see it. */
export const MISSING = '⟦';

/**
 * t returns the sentence for key in the current language with {name}
 * placeholders filled in. Numbers given as params are not formatted here:
 * pass them through format.units first.
 */
export function t(key: Key, params?: Record<string, string | number>): string {
  const s = catalogues[current][key] ?? catalogues.en[key];
  if (s === undefined) return `${MISSING}${key}⟧`;
  if (!params) return s;
  return s.replace(/\{(\w+)\}/g, (m, name: string) => (name in params ? String(params[name]) : m));
}

/**
 * langFromLocale maps a browser language ("zh-CN", "zh-Hans-CN", "en-US") or a
 * POSIX locale ("zh_CN.UTF-8", "C", "POSIX") to a dashboard language: any
 * Chinese is zh-CN, everything else (and C/POSIX/empty) is English.
 */
export function langFromLocale(locale: string | null | undefined): Lang | null {
  if (!locale) return null;
  const l = locale.trim().toLowerCase();
  if (l === '' || l === 'c' || l.startsWith('c.') || l === 'posix') return null;
  if (l.startsWith('zh')) return 'zh-CN';
  if (/^[a-z]{2,3}([-_.@]|$)/.test(l)) return 'en';
  return null;
}

const langKey = 'quotagate.lang';

export interface LangSources {
  stored?: string | null; // the operator's earlier choice
  system?: string | null; // the window's LANG (desktop) — wins over the webview's own guess
  browser?: readonly string[]; // navigator.languages
}

/** pickLang: a remembered choice, else the system locale (window), else the browser's languages, else English. */
export function pickLang(src: LangSources): Lang {
  if (src.stored === 'en' || src.stored === 'zh-CN') return src.stored;
  if (src.system !== undefined && src.system !== null) return langFromLocale(src.system) ?? 'en';
  for (const b of src.browser ?? []) {
    const l = langFromLocale(b);
    if (l) return l;
  }
  return 'en';
}

export function storedLang(): string | null {
  try {
    return localStorage.getItem(langKey);
  } catch {
    return null;
  }
}

export function rememberLang(l: Lang) {
  try {
    localStorage.setItem(langKey, l);
  } catch {
    // storage disabled: the choice lasts for this page
  }
}

// Theme: light or dark, following the system unless the operator chose.
export type ThemePref = 'system' | 'light' | 'dark';
const themeKey = 'quotagate.theme';

export function storedTheme(): ThemePref {
  try {
    const v = localStorage.getItem(themeKey);
    return v === 'light' || v === 'dark' ? v : 'system';
  } catch {
    return 'system';
  }
}

export function rememberTheme(p: ThemePref) {
  try {
    if (p === 'system') localStorage.removeItem(themeKey);
    else localStorage.setItem(themeKey, p);
  } catch {
    // storage disabled
  }
}

export function systemDark(): boolean {
  return typeof matchMedia === 'function' && matchMedia('(prefers-color-scheme: dark)').matches;
}

/** applyTheme sets data-theme on <html> to the theme in force. */
export function applyTheme(p: ThemePref): 'light' | 'dark' {
  const th = p === 'system' ? (systemDark() ? 'dark' : 'light') : p;
  if (typeof document !== 'undefined') {
    document.documentElement.dataset.theme = th;
    document.documentElement.style.colorScheme = th;
  }
  return th;
}
