"""Putting n answers together: usage summed, choices re-indexed, streams interleaved and closed together."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from inferbase.gateway.choices import (
    all_or_none,
    completion_from_chunks,
    completions_merge,
    streams_merge,
    usage_sum,
)
from providers.errors import UpstreamStatusError


def test_usage_sum_adds_counts_and_their_details() -> None:
    one = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15,
           "completion_tokens_details": {"reasoning_tokens": 2}, "estimated": True}
    two = {"prompt_tokens": 10, "completion_tokens": 7, "total_tokens": 17,
           "completion_tokens_details": {"reasoning_tokens": 3}}
    assert usage_sum([one, two]) == {"prompt_tokens": 20, "completion_tokens": 12, "total_tokens": 32,
                                     "completion_tokens_details": {"reasoning_tokens": 5}, "estimated": True}


def test_completions_merge_reindexes_the_choices() -> None:
    answer = {"object": "chat.completion", "choices": [{"index": 0, "message": {"content": "a"}}],
              "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}}
    merged = completions_merge([answer, answer])
    assert [c["index"] for c in merged["choices"]] == [0, 1]
    assert merged["usage"]["total_tokens"] == 6


async def _chunks(index: int, texts: list[str], *, fail: bool = False, gate: asyncio.Event | None = None,
                  closed: list[int] | None = None) -> AsyncIterator[dict[str, Any]]:
    try:
        for text in texts:
            if gate is not None:
                await gate.wait()
            yield {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]}
            await asyncio.sleep(0)
        if fail:
            raise UpstreamStatusError("boom", status=503)
        yield {"choices": [], "usage": {"prompt_tokens": 4, "completion_tokens": len(texts), "total_tokens": 4 + len(texts)}}
    finally:
        if closed is not None:
            closed.append(index)


async def test_streams_merge_gives_each_stream_its_index_and_one_summed_usage() -> None:
    out = [chunk async for chunk in streams_merge([_chunks(0, ["a", "b"]), _chunks(1, ["c", "d", "e"])])]
    texts: dict[int, str] = {}
    for chunk in out[:-1]:
        (choice,) = chunk["choices"]
        texts[choice["index"]] = texts.get(choice["index"], "") + choice["delta"]["content"]
    assert texts == {0: "ab", 1: "cde"}
    assert out[-1] == {"choices": [], "usage": {"prompt_tokens": 8, "completion_tokens": 5, "total_tokens": 13}}


async def test_streams_merge_raises_the_first_failure_and_closes_the_other_streams() -> None:
    closed: list[int] = []
    never = asyncio.Event()  # the second stream waits for ever: it must be closed, not awaited
    merged = streams_merge([_chunks(0, ["a"], fail=True, closed=closed), _chunks(1, ["b"], gate=never, closed=closed)])
    with pytest.raises(UpstreamStatusError):
        async for _ in merged:
            pass
    assert sorted(closed) == [0, 1]


async def test_all_or_none_raises_the_failure_and_cancels_the_rest() -> None:
    cancelled = asyncio.Event()

    async def slow() -> int:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return 1

    async def failing() -> int:
        raise UpstreamStatusError("boom", status=503)

    with pytest.raises(UpstreamStatusError):
        await all_or_none([slow(), failing()])
    assert cancelled.is_set()


async def test_completion_from_chunks_assembles_choices_by_index() -> None:
    async def source() -> AsyncIterator[dict[str, Any]]:
        for index, text in ((0, "a"), (1, "x"), (0, "b"), (1, "y")):
            yield {"choices": [{"index": index, "delta": {"content": text}, "finish_reason": None}]}
        yield {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}, {"index": 1, "delta": {}, "finish_reason": "length"}]}
        yield {"choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 4, "total_tokens": 5}}

    result = await completion_from_chunks(source(), 5)
    assert [(c["message"]["content"], c["finish_reason"]) for c in result["choices"]] == [("ab", "stop"), ("xy", "length")]
    assert result["usage"]["completion_tokens"] == 4
