"""Several choices (`n` > 1): asked of the upstream in one call where its provider makes several,
otherwise made as n calls in parallel and put together as one answer, usage summed."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Iterable
from contextlib import aclosing
from typing import Any, TypeVar

from routing.decision import ChainLink

from .assemble import ChunkAssembler

T = TypeVar("T")

# OpenAI-dialect providers whose chat completions document `n`. Every other route (Anthropic, hosts
# that take n=1 only such as Groq, providers added by an operator) is called n times in parallel.
N_CHOICE_PROVIDERS = frozenset({"openai", "together", "fireworks", "simulated"})


def upstream_calls(n: int, link: ChainLink) -> int:
    """Return how many upstream calls an attempt on this link makes for n choices."""
    if n == 1 or (link.route.dialect == "openai" and link.route.provider in N_CHOICE_PROVIDERS):
        return 1
    return n


def usage_sum(usages: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Add usage objects field by field (nested details too); other values are taken from the first."""
    out: dict[str, Any] = {}
    for usage in usages:
        for key, value in usage.items():
            have = out.get(key)
            if isinstance(value, dict):
                out[key] = usage_sum([have, value]) if isinstance(have, dict) else dict(value)
            elif isinstance(value, int) and not isinstance(value, bool) and isinstance(have, int) and not isinstance(have, bool):
                out[key] = have + value
            elif key not in out:
                out[key] = value
    return out


async def all_or_none(calls: Iterable[Awaitable[T]]) -> list[T]:
    """Run the calls in parallel and return their results in order; the first failure cancels the
    others (and with them their upstream requests) and is raised."""
    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(call) for call in calls]  # type: ignore[arg-type]
    except BaseExceptionGroup as failed:
        raise failed.exceptions[0] from None
    return [task.result() for task in tasks]


def completions_merge(results: list[dict[str, Any]], usage: dict[str, Any] | None = None) -> dict[str, Any]:
    """Put chat.completions together as one: their choices in order, re-indexed, usage summed."""
    choices = [{**choice, "index": i} for i, choice in enumerate(c for result in results for c in result["choices"])]
    merged = {**results[0], "choices": choices}
    if usage is None:
        usages = [result["usage"] for result in results if result.get("usage")]
        usage = usage_sum(usages) if usages else None
    if usage is not None:
        merged["usage"] = usage
    return merged


async def completion_from_chunks(source: AsyncIterator[dict[str, Any]], timeout_s: float) -> dict[str, Any]:
    """Assemble a streamed answer of one or more choices into a chat.completion; raise what the source raises."""
    assemblers: dict[int, ChunkAssembler] = {}
    usage = None
    async with asyncio.timeout(timeout_s), aclosing(source) as chunks:  # type: ignore[type-var]
        async for chunk in chunks:
            if chunk.get("usage"):
                usage = chunk["usage"]
            for choice in chunk.get("choices") or ():
                assembler = assemblers.get(choice.get("index", 0))
                if assembler is None:
                    assembler = assemblers[choice.get("index", 0)] = ChunkAssembler()
                assembler.add({"choices": [choice]})
    if not assemblers:
        assemblers[0] = ChunkAssembler()
    return completions_merge([assemblers[i].completion() for i in sorted(assemblers)], usage)


async def streams_merge(sources: list[AsyncIterator[dict[str, Any]]]) -> AsyncIterator[dict[str, Any]]:
    """Interleave single-choice streams as one stream of choices, chunk by chunk as they arrive: each
    chunk's choice takes its stream's index. The streams' usage chunks become one, summed, at the end.
    The first failure of any stream is raised; closing this stream closes them all."""
    queue: asyncio.Queue[tuple[int, dict[str, Any] | BaseException | None]] = asyncio.Queue()

    async def pump(index: int, source: AsyncIterator[dict[str, Any]]) -> None:
        try:
            async with aclosing(source) as chunks:  # type: ignore[type-var]
                async for chunk in chunks:
                    queue.put_nowait((index, chunk))
        except Exception as exc:  # handed to the reader, which raises it
            queue.put_nowait((index, exc))
        else:
            queue.put_nowait((index, None))

    tasks = [asyncio.ensure_future(pump(i, source)) for i, source in enumerate(sources)]
    usages: list[dict[str, Any]] = []
    running = len(tasks)
    try:
        while running:
            index, item = await queue.get()
            if item is None:
                running -= 1
            elif isinstance(item, BaseException):
                raise item
            elif item.get("choices"):
                for choice in item["choices"]:
                    choice["index"] = index
                yield item
            elif item.get("usage"):
                usages.append(item["usage"])
        if usages:
            yield {"choices": [], "usage": usage_sum(usages)}
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
