"""Prompt token estimates with the cl100k_base vocabulary, bounded in time for huge prompts.

The vocabulary ships in the repo (routing/data/tokenizer/cl100k_base.tiktoken.gz, checked against
OpenAI's published SHA-256) and is handed to tiktoken directly, so nothing is ever downloaded.
cl100k rather than o200k: half the memory for an estimate that is as good for non-OpenAI models.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import tiktoken

ENCODING_NAME = "cl100k_base"
VOCABULARY_PATH = Path(__file__).resolve().parent / "data" / "tokenizer" / "cl100k_base.tiktoken.gz"
VOCABULARY_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
PATTERN = (r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|"""
           r"""\s*[\r\n]|\s+(?!\S)|\s""")
SPECIAL_TOKENS = {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
                  "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276}
HEAD_CHARS = 3_000
TAIL_CHARS = 1_000
MIDDLE_CHARS = 2_000
TOKENS_PER_MESSAGE = 4
TOKENS_PER_REPLY = 3
TOKENS_PER_IMAGE = 765

_encoding: tiktoken.Encoding | None = None
_encoding_lock = threading.Lock()


def _load(path: Path) -> tiktoken.Encoding:
    import tiktoken

    raw = gzip.decompress(path.read_bytes())
    if hashlib.sha256(raw).hexdigest() != VOCABULARY_SHA256:
        raise RuntimeError(f"{path} is not the cl100k_base vocabulary (SHA-256 mismatch)")
    ranks = {base64.b64decode(token): int(rank) for token, rank in (line.split() for line in raw.splitlines() if line)}
    return tiktoken.Encoding(name=ENCODING_NAME, pat_str=PATTERN, mergeable_ranks=ranks, special_tokens=SPECIAL_TOKENS)


def encoding() -> tiktoken.Encoding:
    """Return the process-wide cl100k_base encoding, loading it on first use (thread-safe)."""
    global _encoding
    if _encoding is None:
        with _encoding_lock:
            if _encoding is None:
                _encoding = _load(VOCABULARY_PATH)
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
