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


def _imports(path: Path, root: Path = REPO) -> set[str]:
    """Return the dotted modules of ours a file imports (absolute and relative imports, at any depth of the file)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = list(path.relative_to(root).with_suffix("").parts[:-1])  # the package the file is in
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            if module:
                found.add(module)
                found.update(f"{module}.{alias.name}" for alias in node.names)
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
            module for module in _imports(path, root)
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
    ("billing", "from routing.decision import ChainLink", {"allowed": ()}),
    ("observability", "from providers.http import UpstreamClients", {"allowed": ("routing", "billing")}),
    ("observability", "from inferbase.gateway.exchange import Exchange", {"allowed": ("routing", "billing")}),
    ("inferbase/gateway", "from inferbase.api.errors import ApiError", {"forbidden": ("inferbase.api",)}),
    ("inferbase/gateway", "from inferbase import api", {"forbidden": ("inferbase.api",)}),
    ("inferbase/gateway", "def f():\n    import inferbase.api.validation", {"forbidden": ("inferbase.api",)}),
    ("inferbase/gateway", "from ..api.validation import chat_request_parse", {"forbidden": ("inferbase.api",)}),
    ("inferbase/gateway", "from .. import api", {"forbidden": ("inferbase.api",)}),
    ("routing/engine", "from ...observability import models", {"allowed": ("providers",)}),
])
def test_an_added_edge_is_caught(tmp_path: Path, folder: str, line: str, rule: dict) -> None:
    """The check fails on a forbidden edge added to a clean package (so the tests above can fail)."""
    module = tmp_path / folder / "module.py"
    module.parent.mkdir(parents=True)
    module.write_text("from __future__ import annotations\n\nimport json\n")
    assert _offenders(tmp_path, folder, **rule) == []
    module.write_text(module.read_text() + line + "\n")
    assert len(_offenders(tmp_path, folder, **rule)) == 1


def test_every_rule_has_an_edge_that_breaks_it() -> None:
    """Each package's rule, and each edge forbidden inside the root, is shown failing above."""
    cases = test_an_added_edge_is_caught.pytestmark[0].args[1]  # type: ignore[attr-defined]
    assert {folder.split("/")[0] for folder, _, rule in cases if "allowed" in rule} == set(ALLOWED)
    assert {folder for folder, _, rule in cases if "forbidden" in rule} == set(FORBIDDEN_INSIDE)


def test_relative_imports_are_read_as_the_modules_they_name(tmp_path: Path) -> None:
    module = tmp_path / "inferbase" / "gateway" / "module.py"
    module.parent.mkdir(parents=True)
    module.write_text("from . import chain\nfrom .errors import ApiError\nfrom ..api import views\n")
    assert _imports(module, tmp_path) == {"inferbase.gateway", "inferbase.gateway.chain", "inferbase.gateway.errors",
                                          "inferbase.gateway.errors.ApiError", "inferbase.api",
                                          "inferbase.api.views"}


# Packages a request runs through: no state of their own at module level (it lives in the AppState).
REQUEST_PATH = ("inferbase/gateway", "inferbase/api", "providers", "routing/engine", "billing")
_MUTABLE_CALLS = frozenset({"dict", "list", "set", "OrderedDict", "defaultdict", "Counter", "deque",
                            "WeakKeyDictionary", "WeakValueDictionary", "local", "Lock", "RLock"})


def _module_state(path: Path) -> list[str]:
    """Return the module-level mutable values a file holds (a container, a lock, or a `global` rebound in a
    function); constants in capitals and `__all__` are not state."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found = []
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        names = [t.id for t in targets if isinstance(t, ast.Name) and not t.id.isupper() and t.id != "__all__"]
        called = value.func.id if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) else (
            value.func.attr if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) else None)
        if names and (isinstance(value, ast.Dict | ast.List | ast.Set | ast.DictComp | ast.ListComp | ast.SetComp)
                      or called in _MUTABLE_CALLS):
            found.append(f"{names[0]} (line {node.lineno})")
    found += [f"global {', '.join(node.names)} (line {node.lineno})" for node in ast.walk(tree)
              if isinstance(node, ast.Global)]
    return found


def _stateful(root: Path, folder: str) -> list[str]:
    paths = _sources(root, folder)
    assert paths, f"no Python files under {root / folder}"
    return [f"{path.relative_to(root)}: {state}" for path in paths for state in _module_state(path)]


@pytest.mark.parametrize("folder", REQUEST_PATH)
def test_no_module_level_state_on_the_request_path(folder: str) -> None:
    assert _stateful(REPO, folder) == []


@pytest.mark.parametrize("line", [
    "_cache: dict[str, int] = {}",
    "_tasks = set()",
    "_clients = weakref.WeakKeyDictionary()",
    "_lock = threading.Lock()",
    "_seen = 0\ndef f():\n    global _seen\n    _seen += 1",
])
def test_module_level_state_is_caught(tmp_path: Path, line: str) -> None:
    module = tmp_path / "inferbase" / "gateway" / "module.py"
    module.parent.mkdir(parents=True)
    module.write_text('"""A module."""\n\nLIMITS = {"a": 1}\n__all__ = ["LIMITS"]\n')
    assert _stateful(tmp_path, "inferbase/gateway") == []
    module.write_text(module.read_text() + line + "\n")
    assert len(_stateful(tmp_path, "inferbase/gateway")) == 1
