// One user call through the pinned openai JS SDK at its default retries
// (2), optionally with an Idempotency-Key (IDEM) and optionally deaf to
// x-should-retry (DEAF=1, as an SDK that ignores it): prints the status of
// each HTTP attempt and the error status the call raised (0: it succeeded).
const OpenAI = require("openai");
const statuses = [];
const client = new OpenAI({
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
    await client.chat.completions.create({ model: "demo-chat", messages: [{ role: "user", content: "hello" }] }, opts);
  } catch (e) { status = e.status || -1; }
  process.stdout.write(JSON.stringify({ statuses, status }));
})();
