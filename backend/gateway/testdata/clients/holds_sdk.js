// One user call through the pinned openai JS SDK at its default retries
// (2): prints the HTTP attempts it made and the error status it raised.
const OpenAI = require("openai");
let attempts = 0;
const client = new OpenAI({
  baseURL: process.env.BASE, apiKey: process.env.KEY,
  defaultHeaders: { "X-Demo-Plan": process.env.PLAN },
  fetch: (url, init) => { attempts++; return fetch(url, init); },
});
(async () => {
  let status = 0;
  try {
    await client.chat.completions.create({ model: "demo-chat", messages: [{ role: "user", content: "hello" }] });
  } catch (e) { status = e.status || -1; }
  process.stdout.write(JSON.stringify({ attempts, status }));
})();
