"""The structure docs/architecture.md promises, checked on the source itself.

Imports flow analytics -> answers -> corpus (the settings package `ragplatform` below them
all), there is no import cycle between modules, and modules and functions stay small.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("apps", "ragplatform")
# Which first-party packages each layer may import (its own included).
ALLOWED = {
    "apps.corpus": {"apps.corpus", "ragplatform"},
    "apps.answers": {"apps.answers", "apps.corpus", "ragplatform"},
    "apps.analytics": {"apps.analytics", "apps.answers", "apps.corpus", "ragplatform"},
    # Other clients' doors answer through answers' turns; nothing imports them.
    "apps.reach": {"apps.reach", "apps.answers", "apps.corpus", "ragplatform"},
    # Identity turns people from a provider or directory into accounts and Django groups;
    # collections read those groups without knowing where they came from. Its admin's "who
    # reads what" pages ask the corpus's one access rule (identity sits above the corpus).
    "apps.identity": {"apps.identity", "apps.corpus", "ragplatform"},
    "apps.sources": {"apps.sources", "apps.corpus", "ragplatform"},
}
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 50


def _modules() -> Iterator[tuple[str, Path]]:
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            yield name, path


def _imports(name: str, path: Path) -> set[str]:
    """First-party modules `name` imports, at module level or inside functions."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {m for m in found if m.split(".")[0] in PACKAGES}


def _graph() -> dict[str, set[str]]:
    modules = dict(_modules())
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        # `from package import module` names a module; `from module import name` does not.
        graph[name] = {m for m in _imports(name, path) if m in modules and m != name}
    return graph


def _layer(module: str) -> str | None:
    return next((layer for layer in ALLOWED if module.startswith(layer)), None)


def test_imports_flow_analytics_to_answers_to_corpus() -> None:
    wrong = [
        f"{module} imports {target}"
        for module, targets in _graph().items()
        if (layer := _layer(module)) is not None
        for target in targets
        if not any(target.startswith(allowed) for allowed in ALLOWED[layer])
    ]
    assert wrong == []


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    state: dict[str, int] = {}  # 1 on the path, 2 done
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state and (found := visit(target)):
                return found
        path.pop()
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return []


def test_no_import_cycle_between_modules() -> None:
    graph = _graph()
    # A package's __init__ re-exporting its own modules is not a cycle a reader follows.
    graph = {
        module: {t for t in targets if not module.startswith(t + ".")}
        for module, targets in graph.items()
    }
    assert _cycle(graph) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize(("name", "path"), list(_modules()), ids=lambda v: str(v))
def test_modules_and_functions_stay_small(name: str, path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    assert len(source.splitlines()) <= MAX_MODULE_LINES, f"{name} is over {MAX_MODULE_LINES} lines"
    long = [
        f"{node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert long == []


# --- Rooms inside an app ------------------------------------------------------------------------

APPS = (
    "apps.answers",
    "apps.corpus",
    "apps.analytics",
    "apps.reach",
    "apps.identity",
    "apps.sources",
)
# The app root keeps models, apps, urls and its vocabulary; everything else lives in a room.
MAX_ROOT_MODULES = {
    "apps.answers": 8,
    "apps.corpus": 10,
    "apps.analytics": 8,
    "apps.reach": 4,
    "apps.identity": 6,
    "apps.sources": 8,
}
# Transports, the admin and the commands sit on top: they call the rooms below them, never each
# other, and nothing below imports them (the app's urls.py, which wires them, is at the root).
TOP_ROOMS = frozenset({"web", "api", "admin", "management", "openai_api", "widget"})
# Further one-way rules between rooms below the top: room -> the rooms it may not import.
BELOW = {
    "apps.answers": {
        "conversations": {"turn", "evaluation"},
        "turn": {"evaluation"},
        **{
            room: {"turn", "conversations", "evaluation"}
            for room in ("composing", "retrieval", "routing", "streaming", "providers")
        },
    },
    "apps.corpus": {
        "documents": {"ingestion", "uploads"},
        "search": {"ingestion", "uploads", "documents"},
        "ingestion": {"uploads"},
        "parsing": {"ingestion", "uploads", "documents", "search"},
        "text": {"ingestion", "uploads", "documents", "search", "parsing"},
    },
    "apps.analytics": {"counts": {"dashboard"}},
    # The MCP server is a transport's part too, served by its HTTP mount and `mcp_serve`.
    "apps.reach": {"asking": {"mcp_server"}},
    # The audit is at the bottom, group mapping above it, the sign-in ways above that.
    "apps.identity": {
        "audit": {"groups", "signin", "oidc", "ldap", "scim"},
        "scim": {"signin", "oidc", "ldap"},
        "groups": {"signin", "oidc", "ldap"},
        "signin": {"oidc", "ldap"},
        "oidc": {"ldap"},
        "ldap": {"oidc"},
    },
    # The kinds read a source; the sync decides what to store: kinds never import it.
    "apps.sources": {"kinds": {"sync"}},
}


def _room(module: str) -> tuple[str, str] | None:
    """(app, room) of a module inside a room; None for the app root and outside the apps."""
    app = next((a for a in APPS if module.startswith(a + ".")), None)
    if app is None:
        return None
    rest = module[len(app) + 1 :].split(".")
    return (app, rest[0]) if len(rest) > 1 else None


def _room_import_wrong(module: str, target: str) -> bool:
    source, goal = _room(module), _room(target)
    if source is None or goal is None or source[0] != goal[0] or source[1] == goal[1]:
        return False
    app, room = source
    if goal[1] in TOP_ROOMS:
        return True
    return goal[1] in BELOW.get(app, {}).get(room, set())


def test_rooms_import_one_way() -> None:
    wrong = [
        f"{module} imports {target}"
        for module, targets in _graph().items()
        for target in targets
        if _room_import_wrong(module, target)
    ]
    assert wrong == []


def test_the_room_rule_sees_a_wrong_import() -> None:
    assert _room_import_wrong("apps.answers.turn.entry", "apps.answers.web.views")
    assert _room_import_wrong("apps.answers.api.views", "apps.answers.web.views")
    assert _room_import_wrong("apps.answers.conversations.services", "apps.answers.turn.services")
    assert not _room_import_wrong("apps.answers.web.views", "apps.answers.turn.entry")
    assert not _room_import_wrong("apps.answers.urls", "apps.answers.web.views")


@pytest.mark.parametrize("app", APPS)
def test_app_roots_keep_few_modules(app: str) -> None:
    root = ROOT.joinpath(*app.split("."))
    modules = sorted(p.name for p in root.glob("*.py"))
    assert len(modules) <= MAX_ROOT_MODULES[app], (
        f"{app} has {len(modules)} root modules: {modules}"
    )


# --- One way from async code to the database ----------------------------------------------------

# Async code in the apps reaches the database through `ragplatform.db_threads.db_call`, which
# picks the thread (the caller's, or a database thread when detached); a module that must hand
# something else to a thread says why and is listed here.
SYNC_TO_ASYNC_ALLOWED: frozenset[str] = frozenset()
_SYNC_TO_ASYNC_MODULES = frozenset({"asgiref.sync", "channels.db"})
_SYNC_TO_ASYNC_NAMES = frozenset({"sync_to_async", "SyncToAsync", "database_sync_to_async", "*"})


def _imports_sync_to_async(source: str) -> bool:
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module in _SYNC_TO_ASYNC_MODULES:
            names = {alias.name for alias in node.names}
            if names & _SYNC_TO_ASYNC_NAMES:
                return True
        elif isinstance(node, ast.Import) and {a.name for a in node.names} & _SYNC_TO_ASYNC_MODULES:
            return True
    return False


def test_async_code_reaches_the_database_one_way() -> None:
    importing = [
        name
        for name, path in _modules()
        if name.startswith("apps.") and _imports_sync_to_async(path.read_text(encoding="utf-8"))
    ]
    assert sorted(set(importing) - SYNC_TO_ASYNC_ALLOWED) == []


def test_the_one_way_rule_sees_sync_to_async() -> None:
    assert _imports_sync_to_async("from asgiref.sync import async_to_sync, sync_to_async")
    assert _imports_sync_to_async("def f():\n    from channels.db import database_sync_to_async")
    assert _imports_sync_to_async("import asgiref.sync")
    assert not _imports_sync_to_async("from asgiref.sync import async_to_sync")
    assert not _imports_sync_to_async("from ragplatform.db_threads import db_call")


def _test_modules_imported(source: str) -> set[str]:
    """The test modules (test_*.py) that `source` imports, absolutely or relatively."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return {m for m in found if m.rsplit(".", 1)[-1].startswith("test_")}


def test_no_test_module_imports_another() -> None:
    # What two test modules share lives in a conftest.py (fixtures) or a helper module
    # (fakes.py, factories.py, ...): importing a test module runs its tests' collection twice
    # and ties one module's tests to another's private helpers.
    wrong = [
        f"{path.relative_to(ROOT)} imports {module}"
        for path in sorted((ROOT / "tests").rglob("test_*.py"))
        for module in sorted(_test_modules_imported(path.read_text(encoding="utf-8")))
    ]
    assert wrong == []


def test_the_test_import_rule_sees_each_form_of_import() -> None:
    source = (
        "import tests.answers.test_sse\n"
        "from tests.answers.test_consumer import connected\n"
        "from tests.answers import test_views\n"
        "from .test_models import thing\n"
        "from tests.answers.fakes import ScriptedComposer\n"
    )
    assert _test_modules_imported(source) == {
        "tests.answers.test_sse",
        "tests.answers.test_consumer",
        "tests.answers.test_views",
        ".test_models",
    }
