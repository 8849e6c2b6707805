"""The portal's navigation, named as the spec names things (Observability › Logs).

Pages added later append an entry here; the header renders the sections in this order."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class NavItem:
    section: str  # "Observability"
    label: str  # "Logs"
    url_name: str  # where the entry links: "portal:logs"
    views: tuple[str, ...]  # the views it stays highlighted on
    admin_only: bool = False


NAVIGATION: list[NavItem] = [
    NavItem("Observability", "Logs", "portal:logs", ("portal:logs", "portal:logs_csv", "portal:log_detail")),
]


def navigation_for(*, is_admin: bool, view_name: str) -> list[dict[str, object]]:
    """Return the sections the viewer may see, each with its entries and which one is current."""
    sections: dict[str, list[dict[str, object]]] = {}
    for item in NAVIGATION:
        if item.admin_only and not is_admin:
            continue
        sections.setdefault(item.section, []).append(
            {"label": item.label, "url_name": item.url_name, "current": view_name in item.views})
    return [{"section": name, "items": items, "current": any(i["current"] for i in items)}
            for name, items in sections.items()]
