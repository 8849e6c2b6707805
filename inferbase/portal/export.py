"""Logs as CSV, streamed: rows are formatted as the database hands them over, a batch at a time."""

from __future__ import annotations

import csv
import io
from collections.abc import AsyncIterator, Iterable, Iterator
from datetime import datetime
from typing import Any

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIRequest
from django.http import HttpRequest, StreamingHttpResponse

from .rows import Names, dollars

COLUMNS = (
    "request_id", "created_at", "project", "key", "model_requested", "model_served", "model_served_name", "task",
    "complexity", "thinking", "disposition", "status", "error_code", "streamed", "prompt_tokens", "cached_tokens",
    "completion_tokens", "reasoning_tokens", "cost_micros", "cost_usd", "latency_ms", "ttft_ms", "route_served",
    "finish_reason", "dropped_params", "client_disconnected",
)
ROWS_PER_CHUNK = 500
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _cell(value: Any) -> Any:
    # A spreadsheet runs a cell that starts like a formula; names (keys, projects) are the organization's input.
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def _line(values: dict[str, Any], names: Names) -> list[Any]:
    created: datetime = values["created_at"]
    project_id, key_id = values.get("project_id"), values.get("api_key_id")
    return [_cell(v) for v in (
        values["request_id"], created.isoformat(),
        names.projects.get(project_id, "") if project_id is not None else "",
        names.keys.get(key_id, "") if key_id is not None else "",
        values["model_requested"], values["model_served"], names.model(values["model_served"]),
        values["task"], values["complexity"], values["thinking"], values["final_disposition"], values["status_code"],
        values["error_code"], "true" if values["stream"] else "false", values["prompt_tokens"], values["cached_tokens"],
        values["completion_tokens"], values["reasoning_tokens"], values["cost_micros"],
        dollars(values["cost_micros"]).lstrip("$").replace(",", ""), values["latency_ms"], values["ttft_ms"],
        values["route_served"], values["finish_reason"], " ".join(values.get("dropped_params") or []),
        "true" if values["client_disconnected"] else "false",
    )]


def csv_chunks(rows: Iterable[dict[str, Any]], names: Names) -> Iterator[bytes]:
    """Yield the CSV in chunks of ROWS_PER_CHUNK rows; the header goes with the first chunk."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(COLUMNS)
    count = 0
    for values in rows:
        writer.writerow(_line(values, names))
        count += 1
        if count % ROWS_PER_CHUNK == 0:
            yield buffer.getvalue().encode()
            buffer.seek(0)
            buffer.truncate()
    if buffer.tell() or count == 0:
        yield buffer.getvalue().encode()


async def _async_chunks(chunks: Iterator[bytes]) -> AsyncIterator[bytes]:
    # Under ASGI Django would read a sync iterator whole into a list before sending a byte; so each chunk is
    # pulled on the thread that ran the view, where the database cursor lives.
    pull = sync_to_async(next, thread_sensitive=True)
    while True:
        chunk = await pull(chunks, None)
        if chunk is None:
            return
        yield chunk


def csv_response(request: HttpRequest, chunks: Iterator[bytes], *, filename: str) -> StreamingHttpResponse:
    """Return a streaming CSV download, async under ASGI (daphne) and sync under WSGI and the test client."""
    content: Any = _async_chunks(chunks) if isinstance(request, ASGIRequest) else chunks
    response = StreamingHttpResponse(content, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    response["Cache-Control"] = "no-store"
    return response
