import { afterEach, describe, expect, it } from 'vitest';
import { alertSentence, auditAlertText, parseAlert, webhookTrouble } from './alerts';
import { setLang } from './i18n';

afterEach(() => setLang('en'));

const body = '{"kind":"threshold","tenant":"team","threshold":80,"period":"2026-12","used":"4.000001","budget":"5","currency":"USD","at":"2026-12-02T01:00:00.000Z","run":"run_1"}';

describe('alert rows', () => {
  it('reads the webhook’s JSON from a row’s detail, alone or after words', () => {
    expect(parseAlert(body)?.threshold).toBe(80);
    expect(parseAlert(`threshold 80: ${body}`)?.kind).toBe('threshold');
    expect(parseAlert('threshold 80 crossed')).toBeNull();
    expect(parseAlert('{not json}')).toBeNull();
    expect(parseAlert(undefined)).toBeNull();
  });
  it('says a threshold in the budget’s terms: money in its currency, or units', () => {
    expect(alertSentence(parseAlert(body)!)).toBe('team reached 80% of its budget in December 2026: $4.00 of $5.00 used.');
    const unitsBody = { kind: 'threshold', tenant: 'team', threshold: 50, period: null, used: '50000', budget: '100000', currency: null };
    expect(alertSentence(unitsBody)).toBe('team reached 50% of its budget: 50,000 of 100,000 used.');
    setLang('zh-CN');
    expect(alertSentence(parseAlert(body)!)).toBe('team 已用到预算的 80%（2026年12月）：已用 US$4.00，预算 US$5.00。');
  });
  it('says a hold, an eviction and a restore; an unknown kind is left to the row', () => {
    expect(alertSentence({ kind: 'hold', tenant: 'team', run: 'run_9', period: '2026-W49' })).toBe(
      'A run of team ended held in week 49 of 2026 (run run_9): its usage is unknown until reconciled.',
    );
    expect(alertSentence({ kind: 'evict' })).toContain('evicted');
    expect(alertSentence({ kind: 'restore' })).toContain('restored');
    expect(alertSentence({ kind: 'surprise' })).toBeNull();
  });
  it('an audit row shows its sentence, else its own words', () => {
    expect(auditAlertText({ kind: 'alert', detail: body })).toContain('reached 80%');
    expect(auditAlertText({ kind: 'alert', reason: 'threshold', detail: 'webhook queued' })).toBe('threshold · webhook queued');
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
