"""Read an HTML form as a browser would submit it: what its inputs, selects and textareas hold (no buttons)."""

from __future__ import annotations

from html.parser import HTMLParser


class _FormReader(HTMLParser):
    def __init__(self, form_id: str) -> None:
        super().__init__(convert_charrefs=True)
        self.form_id = form_id
        self.inside = False
        self.data: dict[str, list[str]] = {}
        self._multiple = False
        self._select: str | None = None
        self._select_first: str | None = None
        self._select_chosen = False
        self._textarea: str | None = None
        self._text: list[str] = []

    def _add(self, name: str, value: str) -> None:
        self.data.setdefault(name, []).append(value)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = {k: v or "" for k, v in attrs}
        if tag == "form" and attr.get("id") == self.form_id:
            self.inside = True
        if not self.inside or "disabled" in attr:
            return
        if tag == "input" and attr.get("name"):
            kind = attr.get("type", "text")
            if kind in ("checkbox", "radio"):
                if "checked" in attr:
                    self._add(attr["name"], attr.get("value", "on"))
            elif kind not in ("submit", "button", "reset", "file", "image"):
                self._add(attr["name"], attr.get("value", ""))
        elif tag == "select":
            self._select, self._select_first, self._select_chosen = attr.get("name"), None, False
            self._multiple = "multiple" in attr
        elif tag == "option" and self._select:
            value = attr.get("value", "")
            if self._select_first is None:
                self._select_first = value
            if "selected" in attr:
                self._add(self._select, value)
                self._select_chosen = True
        elif tag == "textarea":
            self._textarea, self._text = attr.get("name"), []

    def handle_endtag(self, tag: str) -> None:
        if tag == "form" and self.inside:
            self.inside = False
        elif tag == "select" and self._select:
            if not self._select_chosen and not self._multiple and self._select_first is not None:
                self._add(self._select, self._select_first)
            self._select = None
        elif tag == "textarea" and self._textarea:
            text = "".join(self._text)
            self._add(self._textarea, text[1:] if text.startswith("\n") else text)
            self._textarea = None

    def handle_data(self, data: str) -> None:
        if self._textarea:
            self._text.append(data)


def form_data(html: str, form_id: str) -> dict[str, list[str]]:
    """Return what submitting the form with this id would send, field by field (every value a list)."""
    reader = _FormReader(form_id)
    reader.feed(html)
    assert reader.data, f"no form {form_id!r} with fields in the page"
    return reader.data
