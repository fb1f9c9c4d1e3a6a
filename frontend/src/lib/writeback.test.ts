// @vitest-environment node
import { afterEach, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { catalogues, setLang } from './i18n';
import { noteText } from './writeback';

afterEach(() => setLang('en'));

describe('write-back notes in the page language', () => {
  // The kinds the Go admin API sends (admin.NoteKinds), written by its test.
  const kinds = JSON.parse(readFileSync(fileURLToPath(new URL('../../../backend/admin/testdata/writeback_notes.golden.json', import.meta.url)), 'utf8')) as string[];
  it('every kind the server sends has a sentence naming the tenant in both languages', () => {
    expect(kinds.length).toBeGreaterThan(4);
    for (const l of ['en', 'zh-CN'] as const) {
      const missing = kinds.filter((k) => !(catalogues[l][`writeBack.note.${k}` as keyof typeof catalogues.en] ?? '').includes('{tenant}'));
      expect(missing, l).toEqual([]);
    }
  });
  it('says a known kind in zh-CN and keeps the server words for an unknown one', () => {
    setLang('zh-CN');
    expect(noteText({ kind: 'removed', tenant: 'bot', text: 'tenant bot: removed from the file' })).toBe('租户 bot 已从文件中移除。');
    expect(noteText({ kind: 'from_the_future', tenant: 'bot', text: 'tenant bot: something new' })).toBe('tenant bot: something new');
    setLang('en');
    expect(noteText({ kind: 'removed', tenant: 'bot', text: 'x' })).toBe('Tenant bot was removed from the file.');
  });
});

