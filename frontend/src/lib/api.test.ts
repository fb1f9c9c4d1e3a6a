// @vitest-environment node
// Real HTTP: a node:http server on 127.0.0.1:0 records what the client sent
// and answers as the admin API would.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiError, createApi, errorFromBody } from './api';
import fixture from '../fixtures/state.json';

interface Seen {
  method: string;
  url: string;
  auth: string | undefined;
  contentType: string | undefined;
  body: string;
}

type Reply = { status: number; body: string; type?: string };

let server: Server;
let base = '';
let seen: Seen[] = [];
let reply: (req: Seen) => Reply = () => ({ status: 200, body: '{}' });

function read(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let b = '';
    req.on('data', (c) => (b += c));
    req.on('end', () => resolve(b));
  });
}

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const s: Seen = {
      method: req.method ?? '',
      url: req.url ?? '',
      auth: req.headers.authorization,
      contentType: req.headers['content-type'],
      body: await read(req),
    };
    seen.push(s);
    const r = reply(s);
    res.writeHead(r.status, { 'Content-Type': r.type ?? 'application/json' });
    res.end(r.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

beforeEach(() => {
  seen = [];
  reply = () => ({ status: 200, body: '{}' });
});

describe('createApi over real HTTP', () => {
  it('GET state sends the bearer token and fills null lists', async () => {
    reply = () => ({ status: 200, body: JSON.stringify({ ...fixture, holds: null, snapshots: null }) });
    const st = await createApi({ url: `${base}/`, token: 'tok en' }).state();
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ method: 'GET', url: '/admin/api/state', auth: 'Bearer tok en' });
    expect(st.holds).toEqual([]);
    expect(st.snapshots).toEqual([]);
    expect(st.tenants[0].available_units).toBe(745904);
  });

  it('reconcile posts JSON units and evidence to the escaped run id', async () => {
    await createApi({ url: base, token: 't' }).reconcile('run/1 x', 1002, 'console: 1,002 tokens');
    expect(seen[0]).toMatchObject({
      method: 'POST',
      url: '/admin/api/holds/run%2F1%20x/reconcile',
      auth: 'Bearer t',
      contentType: 'application/json',
    });
    expect(JSON.parse(seen[0].body)).toEqual({ units: 1002, evidence: 'console: 1,002 tokens' });
  });

  it('applyFinding posts from_provider alone, so the server reconciles at its own lookup', async () => {
    await createApi({ url: base, token: 't' }).applyFinding('run/1 x');
    expect(seen[0]).toMatchObject({ method: 'POST', url: '/admin/api/holds/run%2F1%20x/reconcile' });
    expect(JSON.parse(seen[0].body)).toEqual({ from_provider: true });
  });

  it('cancel, sync and balance hit their endpoints', async () => {
    const api = createApi({ url: base, token: 't' });
    await api.cancelRun('r9');
    await api.syncQuota('ark', 'deepseek-v4-flash');
    await api.setBalance('ark', 'deepseek-v4-flash', { b0: 2242178 });
    await api.setBalance('ark', 'deepseek-v4-flash', { balance: 1726526 });
    expect(seen.map((s) => `${s.method} ${s.url} ${s.body}`)).toEqual([
      'POST /admin/api/runs/r9/cancel ',
      'POST /admin/api/quota/ark/deepseek-v4-flash/sync ',
      'POST /admin/api/quota/ark/deepseek-v4-flash/balance {"b0":2242178}',
      'POST /admin/api/quota/ark/deepseek-v4-flash/balance {"balance":1726526}',
    ]);
  });

  it('audit CSV passes only the filters given', async () => {
    reply = () => ({ status: 200, body: 'seq,at\r\n1,2026-11-29\r\n', type: 'text/csv' });
    const api = createApi({ url: base, token: 't' });
    const { blob } = await api.auditCSV({ from: '2026-11-01', to: '', tenant: 'tenant-a', kind: 'hold', run: 'r1', text: '账单' });
    expect(await blob.text()).toBe('seq,at\r\n1,2026-11-29\r\n');
    await api.auditCSV({});
    expect(seen.map((s) => s.url)).toEqual([
      '/admin/api/audit.csv?from=2026-11-01&tenant=tenant-a&kind=hold&run=r1&text=%E8%B4%A6%E5%8D%95',
      '/admin/api/audit.csv',
    ]);
  });

  it('a contract error becomes an ApiError with the server message and code', async () => {
    reply = () => ({
      status: 409,
      body: JSON.stringify({ error: { message: 'run r1 holds nothing to reconcile', type: 'conflict', code: 'not_held' } }),
    });
    const err = await createApi({ url: base, token: 't' })
      .reconcile('r1', 5, 'x')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 409, code: 'not_held', message: 'run r1 holds nothing to reconcile' });
  });

  it('an unreachable server is status 0 with a sentence naming the address', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise<void>((r) => closed.close(() => r()));
    const err = await createApi({ url, token: 't' })
      .state()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(0);
    expect((err as ApiError).message).toContain(`Cannot reach quotagate at ${url}`);
  });

  it('a state that is not an object is refused', async () => {
    reply = () => ({ status: 200, body: '[1,2]' });
    await expect(createApi({ url: base, token: 't' }).state()).rejects.toThrow('state is not an object');
  });
});

describe('errorFromBody', () => {
  it.each([
    [409, 'Conflict', '{"error":{"message":"run ended","code":"run_ended"}}', 'run ended', 'run_ended'],
    [404, 'Not Found', '{"error":{"message":"","code":"run_not_found"}}', 'Not found (404)', 'run_not_found'],
    [502, 'Bad Gateway', 'upstream exploded', 'HTTP 502 Bad Gateway: upstream exploded', ''],
    [500, 'Internal Server Error', '<html><body>oops</body></html>', 'HTTP 500 Internal Server Error', ''],
    [500, '', '', 'HTTP 500', ''],
    [400, 'Bad Request', '{"message":"not our shape"}', 'HTTP 400 Bad Request: {"message":"not our shape"}', ''],
    [401, 'Unauthorized', '', 'The admin token was refused (401); reopen the dashboard from the URL quotagate printed', ''],
  ])('%s %s %j', (status, text, body, msg, code) => {
    const e = errorFromBody(status, text, body);
    expect(e.message).toBe(msg);
    expect(e.code).toBe(code);
    expect(e.status).toBe(status);
  });
});

describe('wsURL', () => {
  it('swaps the scheme and carries the token as a query parameter', () => {
    expect(createApi({ url: 'http://127.0.0.1:8787/', token: 'a b&c' }).wsURL()).toBe(
      'ws://127.0.0.1:8787/admin/ws?token=a+b%26c',
    );
    expect(createApi({ url: 'https://example.test', token: 't' }).wsURL()).toBe('wss://example.test/admin/ws?token=t');
  });
});
