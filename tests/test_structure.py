"""The import structure: imports run one way, from the surfaces (ui/, evals/) to ingest/ to the
assistant/ library, and no two modules import each other, directly or around a circle.

Every import statement counts, also one inside a function (a lazy import still ties the modules
together). The checker is tested on planted packages so it cannot pass by finding nothing."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import REPO

PACKAGES = ("assistant", "ingest", "ui", "evals")
# A module may import modules of its own layer or a lower one, never a higher one.
LAYERS = {"assistant": 0, "ingest": 1, "ui": 2, "evals": 2}


def module_files(root: Path, packages) -> dict[str, Path]:
    """Dotted module name -> file, for every .py file of the packages under root."""
    modules = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def _known(name: str, modules) -> str | None:
    """The module an import names: itself, else its longest known parent (`a.b.func` -> `a.b`)."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def imports_of(module: str, path: Path, modules) -> set[str]:
    """The modules of the packages that `module` imports anywhere in its file."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            # `from pkg import sub` imports the submodule pkg.sub when there is one
            submodules = [f"{base}.{alias.name}" if base else alias.name for alias in node.names]
            targets = [name if name in modules else base for name in submodules]
        else:
            continue
        for target in targets:
            known = _known(target, modules)
            if known and known != module:
                found.add(known)
    return found


def import_graph(root: Path, packages=PACKAGES) -> dict[str, set[str]]:
    modules = module_files(root, packages)
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every group of modules that import each other around a circle (strongly connected
    components of more than one module), each sorted, found with Tarjan's algorithm."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


def upward_imports(graph: dict[str, set[str]], layers=LAYERS) -> list[str]:
    """Imports from a lower layer into a higher one ("assistant.pipeline -> ingest.update")."""
    def layer(module: str) -> int:
        return layers[module.split(".")[0]]

    return sorted(f"{source} -> {target}" for source, targets in graph.items() for target in targets
                  if layer(target) > layer(source))


# ---- the checker on planted packages ------------------------------------------------------------

def _plant(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_checker_finds_a_planted_circle_through_a_lazy_import(tmp_path):
    _plant(tmp_path, {
        "assistant/__init__.py": "",
        "assistant/alpha.py": "from assistant.beta import helper\n",
        "assistant/beta.py": "def helper():\n    from assistant import gamma\n    return gamma\n",
        "assistant/gamma.py": "import assistant.alpha\n",
        "assistant/delta.py": "from assistant.alpha import helper\n",   # imports into the circle only
    })
    graph = import_graph(tmp_path, ("assistant",))
    assert graph["assistant.beta"] == {"assistant.gamma"}
    assert circles(graph) == [["assistant.alpha", "assistant.beta", "assistant.gamma"]]


def test_checker_finds_a_planted_upward_import(tmp_path):
    _plant(tmp_path, {
        "assistant/__init__.py": "",
        "assistant/core.py": "def build():\n    from ingest.update import run\n    return run\n",
        "ingest/__init__.py": "",
        "ingest/update.py": "from assistant.core import build\nfrom .. import ui\n",
        "ui/__init__.py": "",
    })
    graph = import_graph(tmp_path, ("assistant", "ingest", "ui"))
    assert upward_imports(graph) == ["assistant.core -> ingest.update", "ingest.update -> ui"]
    assert circles(graph) == [["assistant.core", "ingest.update"]]


# ---- the repository ------------------------------------------------------------------------------

def test_the_repository_has_no_import_circle():
    graph = import_graph(REPO)
    assert len(graph) > 40 and graph["ui.cli"]   # the real packages were read
    assert circles(graph) == []


def test_imports_only_run_down_the_layers():
    # surfaces (ui/, evals/) -> ingest/ -> assistant/: the library never reaches up
    assert upward_imports(import_graph(REPO)) == []
