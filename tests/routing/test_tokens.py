"""routing.tokens: cl100k_base estimates, exact for short text and bounded for huge prompts."""

from __future__ import annotations

import random
import string

from routing.tokens import HEAD_CHARS, TAIL_CHARS, count_prompt_tokens, count_text_tokens, encoding

REFERENCE = encoding()  # tiktoken's own cl100k_base encoder over the shipped vocabulary


def sample_text(length: int, seed: int = 7) -> str:
    """Return deterministic word-like text of the given length."""
    rng = random.Random(seed)
    vocabulary = ["".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(1, 9))) for _ in range(500)]
    return " ".join(rng.choices(vocabulary, k=length // 4 + 1))[:length]


def test_count_text_tokens_is_exact_for_short_text() -> None:
    text = "Write a Python function that returns the nth Fibonacci number, with tests. Ünïcödé 😀"
    assert count_text_tokens(text) == len(REFERENCE.encode(text))


def test_count_text_tokens_is_exact_up_to_the_measured_window() -> None:
    text = sample_text(HEAD_CHARS + TAIL_CHARS)
    assert count_text_tokens(text) == len(REFERENCE.encode(text))


def test_count_text_tokens_of_empty_text_is_zero() -> None:
    assert count_text_tokens("") == 0


def test_count_text_tokens_treats_special_token_text_as_plain_text() -> None:
    assert count_text_tokens("<|endoftext|>") > 1


def test_count_text_tokens_extrapolates_a_long_text_closely() -> None:
    text = sample_text(200_000)
    exact = sum(len(REFERENCE.encode(text[i:i + 20_000])) for i in range(0, len(text), 20_000))
    assert abs(count_text_tokens(text) - exact) / exact < 0.02


def test_count_text_tokens_handles_a_million_characters() -> None:
    text = sample_text(1_000_000)
    tokens = count_text_tokens(text)
    head_ratio = len(REFERENCE.encode(text[:HEAD_CHARS])) / HEAD_CHARS
    assert abs(tokens - head_ratio * len(text)) / tokens < 0.02


def test_count_text_tokens_grows_with_the_text() -> None:
    text = sample_text(120_000)
    counts = [count_text_tokens(text[:length]) for length in (10, 1_000, 30_000, 40_000, 120_000)]
    assert counts == sorted(counts)
    assert len(set(counts)) == len(counts)


def test_count_prompt_tokens_adds_message_overhead() -> None:
    messages = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Hello there"}]
    text_tokens = len(REFERENCE.encode("You are terse.")) + len(REFERENCE.encode("Hello there"))
    assert count_prompt_tokens(messages) == text_tokens + 2 * 4 + 3


def test_count_prompt_tokens_counts_text_parts_and_a_flat_765_per_image() -> None:
    messages = [{"role": "user", "content": [
        {"type": "text", "text": "What is in this picture?"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
        {"type": "image_url", "image_url": {"url": "https://example.com/b.png"}},
    ]}]
    assert count_prompt_tokens(messages) == len(REFERENCE.encode("What is in this picture?")) + 2 * 765 + 4 + 3


def test_count_prompt_tokens_counts_tool_call_arguments() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}}
    with_call = count_prompt_tokens([{"role": "assistant", "content": None, "tool_calls": [call]}])
    without = count_prompt_tokens([{"role": "assistant", "content": None}])
    assert with_call > without


def test_count_prompt_tokens_bounds_a_long_conversation() -> None:
    messages = [{"role": "user", "content": sample_text(50_000, seed=i)} for i in range(20)]
    joined = sum(len(REFERENCE.encode(m["content"][i:i + 25_000])) for m in messages for i in (0, 25_000))
    estimate = count_prompt_tokens(messages)
    assert abs(estimate - (joined + 20 * 4 + 3)) / estimate < 0.02


def test_encoding_is_loaded_once() -> None:
    assert encoding() is encoding()
