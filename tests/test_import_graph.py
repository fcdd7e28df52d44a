"""The drawing of the integration's imports, made from its source (every ``import``, those
read only by the type checker included, since a reader follows them too), keeps its shape:

* the host never imports Assist: the history search and who is asking belong to the host,
  and Assist uses them, not the other way round;
* no module of the entry's runtime (``coordinator.py``), the workflows' views and entities
  (``workflow_views.py``, ``entity.py``) or the host and its families is part of an import
  cycle;
* the host's families are sub-packages (``host/approvals/``, ``host/runs/``, ...), not
  prefixes of one flat folder.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "custom_components" / "opennvr_workflows"
#: The host's families, each a sub-package of host/.
FAMILIES = ("approvals", "runs", "cases", "history", "effects", "model", "folder")
#: The modules that may take part in no import cycle, by name or as a package prefix.
ACYCLIC = ("coordinator", "workflow_views", "entity", "host")


def _module(path: Path) -> str:
    """A module's dotted name inside the package ("" for the package itself)."""
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(tree: ast.Module, package: list[str], modules: set[str]) -> Iterator[str]:
    """The integration's modules a module's ``from ... import`` statements name."""
    prefix = "custom_components.opennvr_workflows"
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = package[: len(package) - node.level + 1]
            target = ".".join(base + ([node.module] if node.module else []))
        elif node.module and (node.module + ".").startswith(prefix + "."):
            target = node.module.removeprefix(prefix).strip(".")
        else:
            continue
        for alias in node.names:
            named = f"{target}.{alias.name}".strip(".")
            if named in modules:
                yield named
            elif target in modules:
                yield target


def import_graph() -> dict[str, set[str]]:
    """Module -> the integration's modules it imports."""
    paths = {_module(path): path for path in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        if not name:
            package = []
        tree = ast.parse(path.read_text(encoding="utf-8"))
        graph[name] = set(_imports(tree, package, set(paths))) - {name}
    return graph


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in graph.get(node, ()):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                other = stack.pop()
                on_stack.discard(other)
                component.append(other)
                if other == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _in(module: str, names: tuple[str, ...]) -> bool:
    return any(module == name or module.startswith(f"{name}.") for name in names)


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph()


def test_the_drawing_sees_the_imports_it_should(graph: Mapping[str, set[str]]) -> None:
    """The drawing itself: relative, absolute and type-checking imports are all edges."""
    assert "coordinator" in graph[""], "the package's own __init__"
    assert "host.workflows" in graph["coordinator"], "a type-checking import"
    assert "host.approvals.desk" in graph["host.workflows"]
    assert "host.asker" in graph["assist.base"]


def test_the_host_never_imports_assist(graph: Mapping[str, set[str]]) -> None:
    wrong = sorted(
        f"{module} -> {other}"
        for module, imported in graph.items()
        if _in(module, ("host",))
        for other in imported
        if _in(other, ("assist",))
    )
    assert wrong == []


def test_no_import_cycle_runs_through_the_runtime_the_views_or_the_host(
    graph: Mapping[str, set[str]],
) -> None:
    tangled = [
        component
        for component in cycles(graph)
        if any(_in(module, ACYCLIC) for module in component)
    ]
    assert tangled == []


def test_a_cycle_would_be_found() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_host_families_are_sub_packages() -> None:
    host = PACKAGE / "host"
    for family in FAMILIES:
        assert (host / family / "__init__.py").is_file(), family
    flat = sorted(
        path.name
        for path in host.glob("*.py")
        if path.stem.startswith(("approval", "run_", "case_", "home_", "notify_", "ai_", "task_"))
    )
    assert flat == [], "a family's module outside its sub-package"
