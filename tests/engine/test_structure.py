"""The engine's parts are handed what they use, never the engine itself.

:class:`Engine` wires its parts once (catalog, admission, driver, runner and the step
executors, approvals, due rows, ...). A part that kept the engine could reach
everything through it, and every part would import ``engine.py`` and each other in one
circle. These tests read the package's source and walk a running engine's parts to
keep it from coming back.
"""

from __future__ import annotations

import ast
import functools
import types
from collections import deque
from collections.abc import Iterator
from pathlib import Path

from custom_components.opennvr_workflows import engine as engine_package
from custom_components.opennvr_workflows.engine.testing import event

from .conftest import EngineFactory
from .test_ask_paths import only_yes

PACKAGE_DIR = Path(engine_package.__file__).parent
PACKAGE = engine_package.__name__
#: The engine module itself and the package's public front, which re-exports it.
FRONT = frozenset({"engine", "__init__"})


def _modules() -> dict[str, ast.Module]:
    return {p.stem: ast.parse(p.read_text(), str(p)) for p in sorted(PACKAGE_DIR.glob("*.py"))}


def _imports(tree: ast.Module, modules: set[str]) -> set[str]:
    """The modules of the package a module imports, ``TYPE_CHECKING`` blocks included."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1 and node.module:
                found.add(node.module.split(".")[0])
            elif node.level == 1:
                found |= {alias.name for alias in node.names}
            elif node.level == 0 and (node.module or "").startswith(PACKAGE + "."):
                found.add((node.module or "").removeprefix(PACKAGE + ".").split(".")[0])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(PACKAGE + "."):
                    found.add(alias.name.removeprefix(PACKAGE + ".").split(".")[0])
    return found & modules


def test_no_part_imports_the_engine_module() -> None:
    modules = _modules()
    importers = sorted(
        name
        for name, tree in modules.items()
        if name not in FRONT and "engine" in _imports(tree, set(modules))
    )
    assert importers == []


def test_no_part_names_the_engine_class() -> None:
    """Not as an annotation, a base, a call or an attribute: only engine.py knows it."""
    named = sorted(
        f"{name}.py:{node.lineno}"
        for name, tree in _modules().items()
        if name not in FRONT
        for node in ast.walk(tree)
        if (isinstance(node, ast.Name) and node.id == "Engine")
        or (isinstance(node, ast.Attribute) and node.attr == "Engine")
    )
    assert named == []


def test_the_package_imports_no_circle() -> None:
    modules = _modules()
    graph = {name: _imports(tree, set(modules)) - {name} for name, tree in modules.items()}
    assert graph["engine"], "the import reader found nothing: it is broken"
    cycle = _cycle(graph)
    assert cycle is None, " -> ".join(cycle or ())


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of ``graph`` (its modules in order, the first repeated), or None."""
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> list[str] | None:
        if node in path:
            return [*path[path.index(node) :], node]
        if node in done:
            return None
        for dep in sorted(graph[node]):
            found = visit(dep, [*path, node])
            if found is not None:
                return found
        done.add(node)
        return None

    for start in sorted(graph):
        found = visit(start, [])
        if found is not None:
            return found
    return None


def test_the_circle_finder_finds_a_circle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


# ── what a running engine's parts hold ─────────────────────────────────


def _children(obj: object) -> Iterator[tuple[str, object]]:
    """What ``obj`` refers to, as far as a part could keep something: attributes of the
    package's objects, container items, a bound method's object, a closure's cells."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            yield f"[{key!r}]", value
    elif isinstance(obj, list | tuple | set | frozenset | deque):
        for i, item in enumerate(obj):
            yield f"[{i}]", item
    elif isinstance(obj, types.MethodType):
        yield ".__self__", obj.__self__
    elif isinstance(obj, types.FunctionType):
        for name, cell in zip(obj.__code__.co_freevars, obj.__closure__ or (), strict=True):
            try:
                yield f".<{name}>", cell.cell_contents
            except ValueError:  # an empty cell
                continue
    elif isinstance(obj, functools.partial):
        yield ".func", obj.func
        yield ".args", obj.args
        yield ".keywords", obj.keywords
    elif type(obj).__module__.startswith(PACKAGE + "."):
        names = set(getattr(obj, "__dict__", {}))
        for cls in type(obj).__mro__:
            slots = cls.__dict__.get("__slots__", ())
            names |= {slots} if isinstance(slots, str) else set(slots)
        for name in sorted(names):
            if hasattr(obj, name):
                yield f".{name}", getattr(obj, name)


def _walk(roots: dict[str, object], target: object) -> tuple[list[str], set[type]]:
    """The paths from ``roots`` that reach ``target``, and the types walked through."""
    seen: set[int] = set()
    kinds: set[type] = set()
    found: list[str] = []
    stack = list(roots.items())
    while stack:
        path, obj = stack.pop()
        if obj is target:
            found.append(path)
            continue
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        kinds.add(type(obj))
        stack.extend((path + label, child) for label, child in _children(obj))
    return found, kinds


def test_the_walk_finds_an_engine_kept_in_a_closure() -> None:
    engine = object()
    holder = types.SimpleNamespace(spawn=lambda: engine)
    part = _Part([{"x": holder.spawn}])
    found, _ = _walk({"part": part}, engine)
    assert found == ["part.items[0]['x'].<engine>"]


class _Part:
    __slots__ = ("items",)
    __module__ = PACKAGE + ".example"

    def __init__(self, items: list[object]) -> None:
        self.items = items


async def test_no_part_of_a_running_engine_holds_the_engine(
    make_engine: EngineFactory,
) -> None:
    engine = make_engine()
    engine.set_workflows({"w": only_yes()})
    await engine.start()
    engine.submit(event())
    await engine.idle()
    assert engine.pending_approvals()  # a run is waiting: runs, approvals and due rows hold
    parts = {f"engine.{name}": value for name, value in vars(engine).items()}
    found, kinds = _walk(parts, engine)
    assert found == []
    walked = {cls.__name__ for cls in kinds}
    assert {
        "ActionSteps",
        "Admission",
        "AiSteps",
        "Approvals",
        "Asking",
        "Catalog",
        "Conditions",
        "Counters",
        "DueFiring",
        "DueRows",
        "ForEachSteps",
        "Marks",
        "RunDriver",
        "Runner",
        "SiteClock",
        "StepRecorder",
        "StoreSlot",
    } <= walked
