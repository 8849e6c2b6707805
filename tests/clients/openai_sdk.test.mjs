// The official `openai` Node SDK against the gateway.
import assert from "node:assert/strict";
import { test } from "node:test";

import OpenAI from "openai";
import { zodResponseFormat } from "openai/helpers/zod";
import { z } from "zod";

import {
  API_KEY, BAD_KEY, BASE_URL, CHAIN_FAILED_STATUS, CITY_PROMPT, FAILING_PROMPT, MODEL, PROMPT, REQUEST_ID,
  SIMULATED, UNKNOWN_MODEL, WEATHER_PROMPT, WEATHER_RESULT, WEATHER_TOOL,
} from "./compat.mjs";

const client = new OpenAI({ baseURL: BASE_URL, apiKey: API_KEY, maxRetries: 0, timeout: 30_000 });
const messages = [{ role: "user", content: PROMPT }];
const City = z.object({ name: z.string(), country: z.string(), population: z.number().int().nonnegative() });

const tokens = (usage) => [usage.prompt_tokens, usage.completion_tokens, usage.total_tokens];

async function rejectsWith(promise, ErrorClass, status) {
  const error = await promise.then(() => null, (caught) => caught);
  assert.ok(error instanceof ErrorClass, `expected ${ErrorClass.name}, got ${error}`);
  assert.equal(error.status, status);
  return error;
}

test("whole response has text, usage and the request id", async () => {
  const response = await client.chat.completions.create({ model: "auto", messages });
  assert.ok(response.choices[0].message.content.startsWith(SIMULATED));
  assert.match(response.id, REQUEST_ID);
  assert.equal(response._request_id, response.id); // the SDK reads X-Request-Id
  const [prompt, completion, total] = tokens(response.usage);
  assert.ok(prompt > 0 && completion > 0 && total === prompt + completion);
  assert.ok(response.usage.cost_micros >= 0);
});

test("stream loop reading choices[0].delta on every chunk", async () => {
  const whole = await client.chat.completions.create({ model: MODEL, messages });
  const stream = await client.chat.completions.create({ model: MODEL, messages, stream: true });
  let text = "";
  const chunks = [];
  for await (const chunk of stream) { // unguarded, as such loops are commonly written
    chunks.push(chunk);
    text += chunk.choices[0].delta.content ?? "";
  }
  assert.equal(text, whole.choices[0].message.content);
  assert.match(chunks[0].id, REQUEST_ID);
  assert.deepEqual(new Set(chunks.map((chunk) => chunk.id)), new Set([chunks[0].id]));
  assert.ok(chunks.every((chunk) => !chunk.usage), "no usage was asked for");
});

test("stream with include_usage counts usage once", async () => {
  const whole = await client.chat.completions.create({ model: MODEL, messages });
  const stream = await client.chat.completions.create({
    model: MODEL, messages, stream: true, stream_options: { include_usage: true },
  });
  let text = "";
  const usages = [];
  for await (const chunk of stream) { // the usage chunk has no choices, as at OpenAI
    text += chunk.choices[0]?.delta?.content ?? "";
    if (chunk.usage) usages.push(chunk.usage);
  }
  assert.equal(text, whole.choices[0].message.content);
  assert.equal(usages.length, 1);
  assert.deepEqual(tokens(usages[0]), tokens(whole.usage));
  assert.deepEqual(Object.keys(usages[0]).sort(), Object.keys(whole.usage).sort());
});

test("stream helper builds the final completion", async () => {
  const whole = await client.chat.completions.create({ model: MODEL, messages });
  const stream = client.chat.completions.stream({ model: MODEL, messages });
  let text = "";
  stream.on("content.delta", ({ delta }) => { text += delta; });
  const final = await stream.finalChatCompletion();
  assert.equal(text, whole.choices[0].message.content);
  assert.equal(final.choices[0].message.content, text);
  assert.match(final.id, REQUEST_ID);
});

test("tool round trip", async () => {
  const conversation = [{ role: "user", content: WEATHER_PROMPT }];
  const first = await client.chat.completions.create({
    model: "auto", messages: conversation, tools: [WEATHER_TOOL], tool_choice: "required",
  });
  assert.equal(first.choices[0].finish_reason, "tool_calls");
  const call = first.choices[0].message.tool_calls[0];
  assert.equal(call.function.name, "get_weather");
  assert.equal(typeof JSON.parse(call.function.arguments).city, "string");
  conversation.push(first.choices[0].message, { role: "tool", tool_call_id: call.id, content: WEATHER_RESULT });
  const second = await client.chat.completions.create({ model: "auto", messages: conversation, tools: [WEATHER_TOOL] });
  assert.ok(second.choices[0].message.content.startsWith(SIMULATED));
  assert.ok(!second.choices[0].message.tool_calls?.length);
});

test("named tool_choice, streamed", async () => {
  const stream = await client.chat.completions.create({
    model: "auto", messages: [{ role: "user", content: WEATHER_PROMPT }], tools: [WEATHER_TOOL], stream: true,
    tool_choice: { type: "function", function: { name: "get_weather" } },
  });
  let name = "";
  let args = "";
  for await (const chunk of stream) {
    for (const call of chunk.choices[0].delta.tool_calls ?? []) {
      name += call.function?.name ?? "";
      args += call.function?.arguments ?? "";
    }
  }
  assert.equal(name, "get_weather");
  assert.equal(typeof JSON.parse(args).city, "string");
});

test("structured output with parse and zodResponseFormat", async () => {
  const completion = await client.chat.completions.parse({
    model: "auto", messages: [{ role: "user", content: CITY_PROMPT }], response_format: zodResponseFormat(City, "city"),
  });
  const city = completion.choices[0].message.parsed;
  assert.ok(city.name && city.country);
  assert.match(completion.id, REQUEST_ID);
});

test("models.retrieve", async () => {
  assert.equal((await client.models.retrieve("auto")).id, "auto");
  const model = await client.models.retrieve(MODEL);
  assert.equal(model.id, MODEL);
  assert.equal(model.object, "model");
  assert.ok(Number.isInteger(model.created) && model.created > 0, "OpenAI's shape: id, object, created, owned_by");
  assert.ok(model.owned_by);
  await rejectsWith(client.models.retrieve(UNKNOWN_MODEL), OpenAI.NotFoundError, 404);
});

test("bad key is an AuthenticationError", async () => {
  const bad = new OpenAI({ baseURL: BASE_URL, apiKey: BAD_KEY, maxRetries: 0 });
  await rejectsWith(bad.chat.completions.create({ model: "auto", messages }), OpenAI.AuthenticationError, 401);
});

test("unknown model is a NotFoundError", async () => {
  await rejectsWith(client.chat.completions.create({ model: UNKNOWN_MODEL, messages }), OpenAI.NotFoundError, 404);
});

for (const stream of [false, true]) {
  test(`chain failing before the first token is an InternalServerError (${stream ? "streamed" : "whole"})`, async () => {
    const request = async () => {
      const response = await client.chat.completions.create({
        model: "auto", messages: [{ role: "user", content: FAILING_PROMPT }], stream,
      });
      if (stream) for await (const chunk of response) chunk.choices[0].delta.content;
    };
    const error = await rejectsWith(request(), OpenAI.InternalServerError, CHAIN_FAILED_STATUS);
    assert.match(error.requestID ?? "", REQUEST_ID);
  });
}
