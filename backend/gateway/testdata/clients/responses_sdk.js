// The official openai JS SDK against quotagate's Responses door:
// responses.create and responses.stream, with a function-call round trip.
// BASE, KEY and PLAN come from the Go test; it prints one JSON line.
const { OpenAI } = require("openai");

const client = new OpenAI({
  baseURL: process.env.BASE,
  apiKey: process.env.KEY,
  maxRetries: 0,
  defaultHeaders: { "X-Demo-Plan": process.env.PLAN },
});
const model = "demo-chat";
const tools = [{
  type: "function", name: "get_weather", description: "Weather for a city", strict: false,
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
}];
const question = { role: "user", content: "Weather in Paris?" };

(async () => {
  // 1. responses.create: the model calls the function.
  const first = await client.responses.create({ model, tools, input: [question] });
  const call = first.output.find((o) => o.type === "function_call");
  if (!call) throw new Error("no function_call in " + JSON.stringify(first.output));

  // 2. responses.stream: the same call, streamed, accumulated by the SDK.
  const streamedCall = await client.responses.stream({ model, tools, input: [question] }).finalResponse();
  const call2 = streamedCall.output.find((o) => o.type === "function_call");

  // 3. The round trip: the function's output goes back, streamed answer.
  const input = [question, call, { type: "function_call_output", call_id: call.call_id, output: "21C" }];
  const deltas = [];
  const stream = client.responses.stream({ model, tools, input });
  stream.on("response.output_text.delta", (e) => deltas.push(e.delta));
  const final = await stream.finalResponse();

  // 4. And not streamed, through responses.create.
  const again = await client.responses.create({ model, tools, input });

  console.log(JSON.stringify({
    call: { name: call.name, arguments: call.arguments, status: first.status },
    streamedCall: call2 && { name: call2.name, arguments: call2.arguments },
    text: final.output_text, deltas: deltas.join(""), status: final.status,
    usage: final.usage, createText: again.output_text,
  }));
})().catch((e) => {
  console.error(e && e.stack ? e.stack : e);
  process.exit(1);
});
