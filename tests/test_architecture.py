"""Package boundaries (DESIGN.md): parse imports with ast and fail on a forbidden edge."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
OURS = ("inferbase", "routing", "providers", "billing", "observability")
# What each of our packages may import, besides itself: module prefixes.
ALLOWED = {
    "providers": (),
    "routing": ("providers",),
    "billing": (),
    "observability": ("routing", "billing"),
}
# Edges inside the composition root: the gateway runs requests the API has parsed; it never reaches back up.
FORBIDDEN_INSIDE = {
    "inferbase/gateway": ("inferbase.api",),
}


def _imports(path: Path) -> set[str]:
    """Return the dotted modules of ours a file imports (absolute imports, at any depth of the file)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in found if name.split(".")[0] in OURS}


def _within(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == prefix or module.startswith(prefix + ".") for prefix in prefixes)


def _sources(root: Path, folder: str) -> list[Path]:
    return [path for path in (root / folder).rglob("*.py") if "migrations" not in path.parts]


def _offenders(root: Path, folder: str, *, allowed: tuple[str, ...] | None = None,
               forbidden: tuple[str, ...] = ()) -> list[str]:
    """Return one line per file of `folder` that imports a module of ours outside `allowed` (when given), or
    inside `forbidden`."""
    package = folder.split("/")[0]
    paths = _sources(root, folder)
    assert paths, f"no Python files under {root / folder}: the check would pass on nothing"
    offenders = []
    for path in paths:
        bad = sorted(
            module for module in _imports(path)
            if (allowed is not None and not _within(module, (package, *allowed))) or _within(module, forbidden)
        )
        if bad:
            offenders.append(f"{path.relative_to(root)} imports {bad}")
    return offenders


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_package_imports_only_what_it_may(package: str) -> None:
    assert _offenders(REPO, package, allowed=ALLOWED[package]) == []


@pytest.mark.parametrize("folder", sorted(FORBIDDEN_INSIDE))
def test_the_gateway_never_imports_the_api(folder: str) -> None:
    assert _offenders(REPO, folder, forbidden=FORBIDDEN_INSIDE[folder]) == []


@pytest.mark.parametrize(("folder", "line", "rule"), [
    ("providers", "import routing.decision", {"allowed": ()}),
    ("providers", "from billing import pricing", {"allowed": ()}),
    ("routing", "from observability.models import RequestLog", {"allowed": ("providers",)}),
    ("inferbase/gateway", "from inferbase.api.errors import ApiError", {"forbidden": ("inferbase.api",)}),
    ("inferbase/gateway", "from inferbase import api", {"forbidden": ("inferbase.api",)}),
    ("inferbase/gateway", "def f():\n    import inferbase.api.validation", {"forbidden": ("inferbase.api",)}),
])
def test_an_added_edge_is_caught(tmp_path: Path, folder: str, line: str, rule: dict) -> None:
    """The check fails on a forbidden edge added to a clean package (so the tests above can fail)."""
    module = tmp_path / folder / "module.py"
    module.parent.mkdir(parents=True)
    module.write_text("from __future__ import annotations\n\nimport json\n")
    assert _offenders(tmp_path, folder, **rule) == []
    module.write_text(module.read_text() + line + "\n")
    assert len(_offenders(tmp_path, folder, **rule)) == 1
