// @vitest-environment node
import { afterEach, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ApiError, errorFromBody } from './api';
import { errorKey, errorText } from './errors';
import { catalogues, setLang } from './i18n';

afterEach(() => setLang('en'));

const body = (e: object) => JSON.stringify({ error: { type: 'invalid_request_error', param: null, ...e } });

// The reasons the Go admin API sends (ledger.Reasons), written by its test.
const reasonsFile = fileURLToPath(new URL('../../../backend/admin/testdata/error_reasons.golden.json', import.meta.url));

describe('admin errors in the page language', () => {
  const refusal = errorFromBody(
    409,
    'Conflict',
    body({
      code: 'conflict',
      message: 'tenant busy cannot be deleted: 1200 units are held by 3 runs; reconcile them on the Holds tab first',
      reason: 'tenant_holds',
      params: { tenant: 'busy', units: 1200, runs: 3 },
    }),
  );
  it('parses code, reason and params', () => {
    expect([refusal.status, refusal.code, refusal.reason, refusal.params]).toEqual([409, 'conflict', 'tenant_holds', { tenant: 'busy', units: 1200, runs: 3 }]);
  });
  it.each([
    ['en', refusal, 'Tenant busy cannot be deleted: 1,200 units are held by 3 run(s). Reconcile them on the Holds tab first.'],
    ['zh-CN', refusal, '无法删除租户 busy：3 个调用占用了 1,200 个单位。请先在“占用”页对账。'],
    [
      'zh-CN',
      errorFromBody(400, '', body({ code: 'invalid_request', message: 'reconciled units 23 exceed the reserve 22 of run r1', reason: 'reconcile_over_reserve', params: { run: 'r1', units: 23, reserve: 22 } })),
      '对账单位 23 超过调用 r1 的预留 22。',
    ],
    [
      'zh-CN',
      errorFromBody(400, '', body({ code: 'invalid_request', message: 'tenant team: max_concurrent must be between 1 and 10000 (got 0)', reason: 'max_concurrent_range', params: { tenant: 'team', got: 0, min: 1, max: 10000 } })),
      '租户 team：最大并发必须在 1 到 10,000 之间（收到 0）。',
    ],
    ['zh-CN', errorFromBody(409, '', body({ code: 'not_held', message: 'run r1 holds nothing to reconcile: its usage is trusted', params: { run: 'r1', usage: 'trusted' } })), '调用 r1 没有需要对账的占用。'],
    ['en', errorFromBody(404, '', body({ code: 'run_not_found', message: 'run r9 not found' })), 'That run does not exist.'],
    ['zh-CN', errorFromBody(502, '', body({ code: 'upstream_error', message: 'volcengine: AccessDenied' })), '服务商返回错误：volcengine: AccessDenied'],
    ['zh-CN', new ApiError('Cannot reach quotagate at http://x (Failed to fetch)', 0, '', '', { base: 'http://x', detail: 'Failed to fetch' }), '无法连接 http://x 上的 quotagate（Failed to fetch）。'],
    ['zh-CN', errorFromBody(401, 'Unauthorized', ''), '管理令牌被拒绝（401）；请从 quotagate 打印的网址重新打开面板。'],
    ['zh-CN', errorFromBody(502, 'Bad Gateway', '<html>proxy</html>'), 'HTTP 502 Bad Gateway'],
  ] as const)('%s: %s', (l, err, want) => {
    setLang(l);
    expect(errorText(err)).toBe(want);
  });
  it('falls back to the server words for an unknown reason, a generic code without one, or missing params', () => {
    setLang('zh-CN');
    const unknown = errorFromBody(400, '', body({ code: 'invalid_request', message: 'tenant t: max_concurrent must be at least 1', reason: 'from_the_future' }));
    expect(errorKey(unknown)).toBeNull();
    expect(errorText(unknown)).toBe('tenant t: max_concurrent must be at least 1');
    const generic = errorFromBody(409, '', body({ code: 'conflict', message: 'run r1 already exists' }));
    expect(errorText(generic)).toBe('run r1 already exists');
    const noParams = errorFromBody(409, '', body({ code: 'conflict', message: 'tenant x cannot be deleted', reason: 'tenant_in_flight' }));
    expect(errorText(noParams)).toBe('tenant x cannot be deleted');
    expect(errorText(new Error('plain'))).toBe('plain');
  });
  it('params that are not strings or numbers are dropped', () => {
    const e = errorFromBody(400, '', body({ code: 'invalid_request', message: 'm', reason: 'units_negative', params: { got: { x: 1 } } }));
    expect(e.params).toEqual({});
    expect(errorText(e)).toBe('m');
  });
});

describe('error catalogue', () => {
  const reasons = JSON.parse(readFileSync(reasonsFile, 'utf8')) as string[];
  it('every reason the server sends has a sentence in both languages', () => {
    expect(reasons.length).toBeGreaterThan(10);
    for (const l of ['en', 'zh-CN'] as const) {
      const missing = reasons.filter((r) => !(`err.${r}` in catalogues[l]));
      expect(missing, l).toEqual([]);
    }
  });
  it('every err.* key of the catalogue is a reason, a code or a client-side case', () => {
    const client = ['err.unreachable', 'err.http401', 'err.http403', 'err.http404', 'err.http'];
    const stray = Object.keys(catalogues.en).filter((k) => k.startsWith('err.') && !k.startsWith('err.code.') && !client.includes(k) && !reasons.includes(k.slice(4)));
    expect(stray).toEqual([]);
  });
});
