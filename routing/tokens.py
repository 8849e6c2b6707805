"""Prompt token estimates with the o200k_base vocabulary, bounded in time for huge prompts."""

from __future__ import annotations

import threading
import warnings
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import bpe_openai

ENCODING_NAME = "o200k_base"
HEAD_CHARS = 3_000
TAIL_CHARS = 1_000
MIDDLE_CHARS = 2_000
TOKENS_PER_MESSAGE = 4
TOKENS_PER_REPLY = 3
TOKENS_PER_IMAGE = 765

_encoding: bpe_openai.Encoding | None = None
_encoding_lock = threading.Lock()


def encoding() -> bpe_openai.Encoding:
    """Return the process-wide o200k_base encoding, loading it on first use (thread-safe)."""
    global _encoding
    if _encoding is None:
        with _encoding_lock:
            if _encoding is None:
                # Importing the package reads its bundled vocabularies through a deprecated importlib API;
                # that warning is not ours to act on and must not fail a run with warnings as errors.
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", DeprecationWarning)
                    import bpe_openai

                    _encoding = bpe_openai.get_encoding(ENCODING_NAME)
    return _encoding


def count_text_tokens(text: str) -> int:
    """Count tokens in text: exact up to 4,000 characters; beyond, a head, a middle and a tail slice are
    encoded exactly and the rest is extrapolated at their tokens-per-character ratio (bounded cost)."""
    if not text:
        return 0
    encode = encoding().encode_ordinary
    if len(text) <= HEAD_CHARS + TAIL_CHARS:
        return len(encode(text))
    mid = len(text) // 2
    half = MIDDLE_CHARS // 2
    head, middle, tail = text[:HEAD_CHARS], text[mid - half : mid + half], text[-TAIL_CHARS:]
    head_tokens, tail_tokens = len(encode(head)), len(encode(tail))
    sampled_tokens = head_tokens + len(encode(middle)) + tail_tokens
    rest = len(text) - HEAD_CHARS - TAIL_CHARS
    return head_tokens + tail_tokens + round(rest * sampled_tokens / (HEAD_CHARS + MIDDLE_CHARS + TAIL_CHARS))


def count_prompt_tokens(messages: list[dict[str, Any]]) -> int:
    """Estimate the prompt tokens of chat messages: text, 765 per image, 4 per message plus 3 to prime the reply."""
    texts: list[str] = []
    images = 0
    for message in messages:
        for piece in _message_pieces(message):
            if piece is None:
                images += 1
            elif piece:
                texts.append(piece)
    if sum(len(text) for text in texts) <= HEAD_CHARS + TAIL_CHARS:
        text_tokens = sum(count_text_tokens(text) for text in texts)
    else:
        # One bounded estimate over the whole conversation keeps a 1M-character prompt cheap.
        text_tokens = count_text_tokens("\n".join(texts))
    return text_tokens + images * TOKENS_PER_IMAGE + TOKENS_PER_MESSAGE * len(messages) + TOKENS_PER_REPLY


def _message_pieces(message: dict[str, Any]) -> Iterator[str | None]:
    """Yield the text pieces of one message, and None for each image part."""
    name = message.get("name")
    if isinstance(name, str):
        yield name
    content = message.get("content")
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for part in content:
            if not isinstance(part, dict):
                continue
            if part.get("type") == "text" and isinstance(part.get("text"), str):
                yield part["text"]
            elif part.get("type") == "image_url":
                yield None
    for call in message.get("tool_calls") or ():
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            yield str(function.get("name") or "")
            yield str(function.get("arguments") or "")
