// One user call through a pinned Stainless SDK at its default retries (2):
// the openai SDK's chat.completions.create, or with SDK=anthropic the
// @anthropic-ai/sdk's messages.create; optionally with an Idempotency-Key
// (IDEM) and optionally deaf to x-should-retry (DEAF=1, as an SDK that
// ignores it). Prints the status of each HTTP attempt and the error status
// the call raised (0: it succeeded).
const anthropic = process.env.SDK === "anthropic";
const SDK = anthropic ? require("@anthropic-ai/sdk") : require("openai");
const statuses = [];
const client = new SDK({
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
  const messages = [{ role: "user", content: "hello" }];
  try {
    if (anthropic) await client.messages.create({ model: "demo-chat", max_tokens: 50, messages }, opts);
    else await client.chat.completions.create({ model: "demo-chat", messages }, opts);
  } catch (e) { status = e.status || -1; }
  process.stdout.write(JSON.stringify({ statuses, status }));
})();
