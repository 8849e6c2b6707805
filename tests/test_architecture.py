"""Package boundaries (DESIGN.md): parse imports with ast and fail on a forbidden edge."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
OURS = ("inferbase", "routing", "providers", "billing", "observability")
ALLOWED = {
    "providers": set(),
    "routing": {"providers"},
    "billing": set(),
    "observability": {"routing", "billing"},
    "inferbase": set(OURS),
}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found & set(OURS)


@pytest.mark.parametrize("package", [p for p in OURS if p != "inferbase"])
def test_package_imports_only_what_it_may(package: str) -> None:
    offenders = []
    for path in (REPO / package).rglob("*.py"):
        if "migrations" in path.parts:
            continue
        bad = _imports(path) - ALLOWED[package] - {package}
        if bad:
            offenders.append(f"{path.relative_to(REPO)} imports {sorted(bad)}")
    assert offenders == []


def test_providers_do_not_import_django_apps_of_ours_or_routing() -> None:
    assert all("routing" not in _imports(p) for p in (REPO / "providers").rglob("*.py"))
