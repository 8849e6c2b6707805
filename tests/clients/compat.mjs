// What every Node client test shares: the gateway under test, the requests, and what a response must show
// (the same as compat.py for the Python clients).

export const BASE_URL = process.env.INFERBASE_BASE_URL ?? "";
export const API_KEY = process.env.INFERBASE_API_KEY ?? "";
if (!BASE_URL || !API_KEY) {
  throw new Error("INFERBASE_BASE_URL and INFERBASE_API_KEY are unset: run `make test-clients`");
}

export const REQUEST_ID = /^req-[0-9a-f]+$/;
export const SIMULATED = "[simulated "; // every simulated answer starts with this label

// A named model: the simulated upstream answers the same request with the same text and usage, so a
// streamed answer can be compared with the whole one token for token.
export const MODEL = "openai-gpt-4.1-mini";
export const PROMPT = "Say hello in one short sentence.";
// The simulated upstream answers 503 on every route: the chain fails before the first token.
export const FAILING_PROMPT = "Say hello in one short sentence. [sim:fail=503]";
export const CHAIN_FAILED_STATUS = 502; // every route answered a 5xx: the gateway's upstream_error
export const UNKNOWN_MODEL = "no-such-model";
export const BAD_KEY = "inf_not_a_key";

export const WEATHER_PROMPT = "What is the weather in Paris?";
export const WEATHER_PARAMETERS = {
  type: "object",
  properties: {
    city: { type: "string", description: "The city's name" },
    unit: { type: "string", enum: ["celsius", "fahrenheit"] },
  },
  required: ["city"],
};
export const WEATHER_TOOL = {
  type: "function",
  function: { name: "get_weather", description: "The current weather in a city.", parameters: WEATHER_PARAMETERS },
};
export const WEATHER_RESULT = '{"temperature": 21, "unit": "celsius", "sky": "clear"}';
export const CITY_PROMPT = "Describe the city of Lyon as JSON: its name, its country and its population.";
