"""What every client test shares: the gateway under test, the requests, and what a response must show."""

from __future__ import annotations

import os
import re

from pydantic import BaseModel, Field

# litellm fetches its price map over the network at import unless told to use the copy it ships.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

BASE_URL = os.environ.get("INFERBASE_BASE_URL", "")
API_KEY = os.environ.get("INFERBASE_API_KEY", "")
if not BASE_URL or not API_KEY:
    raise RuntimeError("INFERBASE_BASE_URL and INFERBASE_API_KEY are unset: run `make test-clients`")

REQUEST_ID = re.compile(r"^req-[0-9a-f]+$")
SIMULATED = "[simulated "  # every simulated answer starts with this label

# A named model: the simulated upstream answers the same request with the same text and usage, so a
# streamed answer can be compared with the whole one token for token.
MODEL = "openai-gpt-4.1-mini"
PROMPT = "Say hello in one short sentence."
# The simulated upstream answers 503 on every route: the chain fails before the first token.
FAILING_PROMPT = "Say hello in one short sentence. [sim:fail=503]"
CHAIN_FAILED_STATUS = 502  # every route answered a 5xx: the gateway's upstream_error
UNKNOWN_MODEL = "no-such-model"
BAD_KEY = "inf_not_a_key"

WEATHER_PROMPT = "What is the weather in Paris?"
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The current weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "The city's name"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city"],
        },
    },
}
WEATHER_RESULT = '{"temperature": 21, "unit": "celsius", "sky": "clear"}'
CITY_PROMPT = "Describe the city of Lyon as JSON: its name, its country and its population."



class City(BaseModel):
    """The structured-output document every client asks for."""

    name: str
    country: str
    population: int = Field(ge=0)


def token_counts(usage: object) -> tuple[int, int, int]:
    """Return (prompt, completion, total) tokens of an OpenAI-shaped usage object or dict."""
    get = usage.get if isinstance(usage, dict) else lambda name: getattr(usage, name)
    return get("prompt_tokens"), get("completion_tokens"), get("total_tokens")
