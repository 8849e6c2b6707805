"""ChunkAssembler: one pass accumulates a streamed choice and tells what each chunk carries."""

from __future__ import annotations

from inferbase.gateway.assemble import ChunkAssembler


def _chunk(delta: dict, finish: str | None = None, **extra: object) -> dict:
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}], **extra}


def test_flags_and_accumulation_for_each_kind_of_delta() -> None:
    a = ChunkAssembler()
    assert a.add(_chunk({"role": "assistant", "content": ""})) == (False, False, False)
    assert a.add(_chunk({"reasoning_content": "think "})) == (False, True, False)
    assert a.add(_chunk({"reasoning": "more"})) == (False, True, False)
    assert a.add(_chunk({"content": "Hel", "reasoning_content": " and"})) == (True, True, False)
    assert a.add(_chunk({"content": "lo"})) == (True, False, False)
    assert a.add(_chunk({"refusal": "no"})) == (True, False, False)
    call = {"index": 0, "id": "call_1", "function": {"name": "get", "arguments": '{"a"'}}
    assert a.add(_chunk({"tool_calls": [call]})) == (True, False, False)
    assert a.add(_chunk({"tool_calls": [{"index": 0, "function": {"arguments": ": 1}"}}]})) == (True, False, False)
    assert a.add(_chunk({}, "tool_calls")) == (False, False, True)
    assert a.add({"choices": [], "usage": {"completion_tokens": 9}}) == (False, False, False)

    message = a.completion()["choices"][0]["message"]
    assert message["content"] == "Hello" and message["reasoning_content"] == "think more and"
    assert message["refusal"] == "no"
    assert message["tool_calls"] == [{"id": "call_1", "type": "function",
                                      "function": {"name": "get", "arguments": '{"a": 1}'}}]
    assert a.finish_reason == "tool_calls" and a.usage == {"completion_tokens": 9}
