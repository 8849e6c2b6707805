"""Adapter for the Anthropic Messages API: OpenAI-shaped bodies in, OpenAI-shaped answers out."""

from .adapter import AnthropicAdapter
from .request import not_forwarded, to_anthropic_request
from .response import from_anthropic_response, openai_usage, stream_error, translate_stream

__all__ = [
    "AnthropicAdapter",
    "from_anthropic_response",
    "not_forwarded",
    "openai_usage",
    "stream_error",
    "to_anthropic_request",
    "translate_stream",
]
