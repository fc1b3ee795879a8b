"""Imports flow analytics -> answers -> corpus, and no module of the apps imports itself back.

Read from the source with `ast`, so imports inside functions count as well: moving an import
into a function hides a dependency from the import system, not from this test.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# An app may import only the apps after it in this list.
LAYERS = ("apps.analytics", "apps.answers", "apps.corpus")


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _sources() -> dict[str, Path]:
    return {
        _module_name(path): path
        for path in sorted((ROOT / "apps").rglob("*.py"))
        if "migrations" not in path.parts
    }


def _imports(module: str, path: Path) -> Iterator[str]:
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            yield base
            yield from (f"{base}.{alias.name}" for alias in node.names)


def _graph() -> dict[str, set[str]]:
    sources = _sources()
    return {
        module: {name for name in _imports(module, path) if name in sources and name != module}
        for module, path in sources.items()
    }


def _layer(module: str) -> int | None:
    return next((i for i, app in enumerate(LAYERS) if module.startswith(app + ".")), None)


def test_the_graph_sees_the_apps() -> None:
    graph = _graph()
    assert "apps.corpus.services" in graph["apps.corpus.uploads"]


@pytest.mark.parametrize("app", LAYERS)
def test_an_app_imports_only_the_apps_below_it(app: str) -> None:
    rank = LAYERS.index(app)
    wrong = sorted(
        f"{module} imports {target}"
        for module, targets in _graph().items()
        if module.startswith(app + ".")
        for target in targets
        if (layer := _layer(target)) is not None and layer < rank
    )
    assert not wrong, "\n".join(wrong)


def test_no_import_cycle() -> None:
    graph = _graph()
    done: set[str] = set()

    def visit(module: str, path: list[str]) -> list[str] | None:
        if module in path:
            return [*path[path.index(module) :], module]
        if module in done:
            return None
        for target in sorted(graph[module]):
            if cycle := visit(target, [*path, module]):
                return cycle
        done.add(module)
        return None

    for module in sorted(graph):
        cycle = visit(module, [])
        assert cycle is None, " -> ".join(cycle or [])
