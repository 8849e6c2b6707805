// The Vercel AI SDK (`ai`) with `@ai-sdk/openai-compatible` pointed at the gateway.
import assert from "node:assert/strict";
import { test } from "node:test";

import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { APICallError, generateObject, generateText, jsonSchema, Output, streamText, tool } from "ai";
import { z } from "zod";

import {
  API_KEY, BAD_KEY, BASE_URL, CHAIN_FAILED_STATUS, CITY_PROMPT, FAILING_PROMPT, MODEL, PROMPT, REQUEST_ID,
  SIMULATED, UNKNOWN_MODEL, WEATHER_PARAMETERS, WEATHER_PROMPT,
} from "./compat.mjs";

// includeUsage asks for OpenAI's usage chunk on streams; supportsStructuredOutputs makes generateObject send
// json_schema (without it, it sends json_object with no mention of JSON in the prompt: a 400, as at OpenAI).
const settings = { name: "inferbase", baseURL: BASE_URL, includeUsage: true, supportsStructuredOutputs: true };
const inferbase = createOpenAICompatible({ ...settings, apiKey: API_KEY });
const City = z.object({ name: z.string(), country: z.string(), population: z.number().int().nonnegative() });
const weather = tool({
  description: "The current weather in a city.",
  inputSchema: jsonSchema(WEATHER_PARAMETERS),
  execute: async ({ city }) => ({ city, temperature: 21, unit: "celsius", sky: "clear" }),
});

const tokens = (usage) => [usage.inputTokens, usage.outputTokens, usage.totalTokens];

async function rejectsWithApiCallError(promise, statusCode) {
  const error = await promise.then(() => null, (caught) => caught);
  assert.ok(APICallError.isInstance(error), `expected an APICallError, got ${error}`);
  assert.equal(error.statusCode, statusCode);
  return error;
}

test("generateText has text, usage and the request id", async () => {
  const result = await generateText({ model: inferbase("auto"), prompt: PROMPT, maxRetries: 0 });
  assert.ok(result.text.startsWith(SIMULATED));
  assert.match(result.response.id, REQUEST_ID);
  const [input, output, total] = tokens(result.usage);
  assert.ok(input > 0 && output > 0 && total === input + output);
});

test("streamText's textStream loop, with usage counted once", async () => {
  const whole = await generateText({ model: inferbase(MODEL), prompt: PROMPT, maxRetries: 0 });
  const errors = [];
  const result = streamText({ model: inferbase(MODEL), prompt: PROMPT, maxRetries: 0, onError: ({ error }) => errors.push(error) });
  let text = "";
  for await (const textPart of result.textStream) { // the documented loop
    text += textPart;
  }
  assert.deepEqual(errors, []);
  assert.equal(text, whole.text);
  assert.match((await result.response).id, REQUEST_ID);
  assert.deepEqual(tokens(await result.usage), tokens(whole.usage));
});

test("streamText without includeUsage (the provider's default): the same loop, the same text", async () => {
  const plain = createOpenAICompatible({ name: "inferbase", baseURL: BASE_URL, apiKey: API_KEY });
  const whole = await generateText({ model: plain(MODEL), prompt: PROMPT, maxRetries: 0 });
  const errors = [];
  const result = streamText({ model: plain(MODEL), prompt: PROMPT, maxRetries: 0, onError: ({ error }) => errors.push(error) });
  let text = "";
  for await (const textPart of result.textStream) text += textPart;
  assert.deepEqual(errors, []);
  assert.equal(text, whole.text);
  assert.match((await result.response).id, REQUEST_ID);
});

test("tool round trip", async () => {
  const messages = [{ role: "user", content: WEATHER_PROMPT }];
  const first = await generateText({
    model: inferbase("auto"), messages, tools: { get_weather: weather }, toolChoice: "required", maxRetries: 0,
  });
  assert.deepEqual(first.toolCalls.map((call) => call.toolName), ["get_weather"]);
  assert.equal(typeof first.toolCalls[0].input.city, "string");
  assert.equal(first.toolResults[0].output.temperature, 21);
  const second = await generateText({
    model: inferbase("auto"), messages: [...messages, ...first.response.messages], tools: { get_weather: weather },
    maxRetries: 0,
  });
  assert.ok(second.text.startsWith(SIMULATED));
  assert.deepEqual(second.toolCalls, []);
});

test("generateObject with supportsStructuredOutputs", async () => {
  const result = await generateObject({ model: inferbase("auto"), schema: City, prompt: CITY_PROMPT, maxRetries: 0 });
  assert.ok(result.object.name && result.object.country);
  assert.match(result.response.id, REQUEST_ID);
});

test("generateText with Output.object (generateObject's successor)", async () => {
  const result = await generateText({
    model: inferbase("auto"), output: Output.object({ schema: City }), prompt: CITY_PROMPT, maxRetries: 0,
  });
  assert.ok(result.output.name && result.output.country);
  assert.match(result.response.id, REQUEST_ID);
});

test("bad key is an APICallError 401", async () => {
  const bad = createOpenAICompatible({ ...settings, apiKey: BAD_KEY });
  await rejectsWithApiCallError(generateText({ model: bad("auto"), prompt: PROMPT, maxRetries: 0 }), 401);
});

test("unknown model is an APICallError 404", async () => {
  await rejectsWithApiCallError(generateText({ model: inferbase(UNKNOWN_MODEL), prompt: PROMPT, maxRetries: 0 }), 404);
});

test("chain failing before the first token is an APICallError 502 (whole)", async () => {
  const error = await rejectsWithApiCallError(
    generateText({ model: inferbase("auto"), prompt: FAILING_PROMPT, maxRetries: 0 }), CHAIN_FAILED_STATUS);
  assert.match(error.responseHeaders["x-request-id"] ?? "", REQUEST_ID);
});

test("chain failing before the first token is an APICallError 502 (streamed, onError)", async () => {
  const errors = [];
  const result = streamText({
    model: inferbase("auto"), prompt: FAILING_PROMPT, maxRetries: 0, onError: ({ error }) => errors.push(error),
  });
  let text = "";
  for await (const textPart of result.textStream) text += textPart;
  assert.equal(text, "");
  assert.equal(errors.length, 1);
  assert.ok(APICallError.isInstance(errors[0]), `expected an APICallError, got ${JSON.stringify(errors[0])}`);
  assert.equal(errors[0].statusCode, CHAIN_FAILED_STATUS);
  assert.match(errors[0].responseHeaders["x-request-id"] ?? "", REQUEST_ID);
});
