from __future__ import annotations

from inferbase.gateway.structured import json_extract, schema_errors


def test_a_plain_document_needs_no_repair() -> None:
    assert json_extract('{"a": 1}').method is None
    assert json_extract('{"a": 1}').document == '{"a": 1}'


def test_a_fenced_document_is_taken_out_as_written() -> None:
    extraction = json_extract('Here you go:\n```json\n{"a": [1, 2]}\n```\nEnjoy.')
    assert extraction.method == "code_fence"
    assert extraction.document == '{"a": [1, 2]}'


def test_an_embedded_document_is_found_with_braces_inside_strings() -> None:
    extraction = json_extract('Sure! {"text": "a } b", "n": 2} hope that helps')
    assert extraction.method == "embedded"
    assert extraction.document == '{"text": "a } b", "n": 2}'


def test_nothing_is_rewritten_to_make_it_parse() -> None:
    assert json_extract("{'a': 1,}").document is None
    assert json_extract("no json here").document is None


def test_schema_errors_name_the_path() -> None:
    schema = {"type": "object", "properties": {"age": {"type": "integer"}}, "required": ["age"]}
    assert schema_errors('{"age": 3}', schema) == []
    assert schema_errors('{"age": "x"}', schema) == ["age: 'x' is not of type 'integer'"]
