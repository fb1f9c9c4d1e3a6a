// One user call through the pinned @anthropic-ai/sdk at its default retries
// (2) against the Messages door, optionally with an Idempotency-Key (IDEM)
// and optionally deaf to x-should-retry (DEAF=1): prints the status of each
// HTTP attempt and the error status the call raised (0: it succeeded).
const Anthropic = require("@anthropic-ai/sdk");
const statuses = [];
const client = new Anthropic({
  baseURL: process.env.BASE, apiKey: process.env.KEY,
  defaultHeaders: { "X-Demo-Plan": process.env.PLAN },
  fetch: async (url, init) => {
    const r = await fetch(url, init);
    statuses.push(r.status);
    if (process.env.DEAF !== "1") return r;
    const h = new Headers(r.headers);
    h.delete("x-should-retry");
    return new Response(r.body, { status: r.status, statusText: r.statusText, headers: h });
  },
});
(async () => {
  let status = 0;
  const opts = process.env.IDEM ? { headers: { "Idempotency-Key": process.env.IDEM } } : {};
  try {
    await client.messages.create({ model: "demo-chat", max_tokens: 50, messages: [{ role: "user", content: "hello" }] }, opts);
  } catch (e) { status = e.status || -1; }
  process.stdout.write(JSON.stringify({ statuses, status }));
})();
