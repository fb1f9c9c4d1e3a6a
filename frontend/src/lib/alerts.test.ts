import { afterEach, describe, expect, it } from 'vitest';
import { alertText, webhookTrouble } from './alerts';
import { setLang } from './i18n';

afterEach(() => setLang('en'));

const row = (reason: string, detail: string, over = {}) => ({ kind: 'alert', tenant: 'team', reason, detail, ...over });

describe('alert rows', () => {
  it('a threshold in the budget’s terms: money in the gateway’s currency, or units', () => {
    expect(alertText(row('threshold', '80% of the money budget reached: 4.000001 of 5 in 2026-12'), 'USD')).toEqual({
      kind: 'budget threshold',
      text: 'team reached 80% of its budget in December 2026: $4.00 of $5.00 used.',
    });
    expect(alertText(row('threshold', '50% of the units budget reached: 50000 of 100000'), 'USD').text).toBe(
      'team reached 50% of its budget: 50,000 of 100,000 used.',
    );
    setLang('zh-CN');
    expect(alertText(row('threshold', '80% of the money budget reached: 4.000001 of 5 in 2026-12'), 'USD')).toEqual({
      kind: '预算阈值',
      text: 'team 已用到预算的 80%（2026年12月）：已用 US$4.00，预算 US$5.00。',
    });
  });
  it('a held run, an eviction and a restore', () => {
    expect(alertText(row('hold', 'run r9 ended with its usage unknown; its hold stays until it is reconciled', { run: 'r9' }), null).text).toBe(
      'A run of team ended held (run r9): its usage is unknown until reconciled.',
    );
    expect(alertText(row('evict', 'demo/demo-chat evict: usage reached the wall', { tenant: undefined }), null).text).toBe(
      'The quota guard evicted demo/demo-chat from the free quota: usage reached the wall',
    );
    expect(alertText(row('restore', 'demo/demo-chat restore: a new day', { tenant: undefined }), null).text).toBe(
      'The quota guard restored demo/demo-chat to the free quota: a new day',
    );
  });
  it('a sentence of another shape, or a kind it does not know, is shown as written', () => {
    expect(alertText(row('threshold', 'eighty percent'), null)).toEqual({ kind: 'budget threshold', text: 'eighty percent' });
    expect(alertText(row('surprise', 'something new'), null)).toEqual({ kind: null, text: 'surprise · something new' });
  });
});

describe('the webhook', () => {
  it('is trouble only while failing', () => {
    const w = { url: 'https://hooks.example/q', secret_set: true, pending: 3, failing: true, last_error: '500 Internal Server Error' };
    expect(webhookTrouble({ thresholds: [80], webhook: w })).toBe(w);
    expect(webhookTrouble({ thresholds: [80], webhook: { ...w, failing: false } })).toBeNull();
    expect(webhookTrouble({ thresholds: [80] })).toBeNull();
    expect(webhookTrouble(undefined)).toBeNull();
  });
});
