"""The contract package as a sharer installs it: an interpreter that has nothing else.

:func:`build_site` lays out a folder the way ``pip install`` of this repository would fill
site-packages, read from pyproject.toml: the package folder under its installed name, and every
top-level module of the declared dependencies and of what they need in turn (taken from this
environment, as links). :func:`run_isolated` runs a command with ``python -I -S`` and only that
folder on the path, so Home Assistant, the SDK and anything else of this environment cannot be
found; a finder records and refuses any attempt to import them anyway, and the run reports what
was tried. Used by tests/workflow/test_standalone.py and scripts/bench_cli.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = ROOT / "pyproject.toml"
LAUNCHER = ROOT / "scripts" / "workflow_v1.py"

#: Top-level names the contract package must never import: Home Assistant, the integration
#: (whose ``__init__`` imports Home Assistant) and the integration's other requirements.
FORBIDDEN = ("homeassistant", "custom_components", "opennvr_app_sdk", "pyopennvr", "ollama")

_MARK = "STANDALONE-REPORT "

# Runs in the isolated interpreter: argv is SITE TARGET ARGV0 ARGS...; TARGET is a console
# entry ("module:function") or a script path. Prints what it tried to import at exit.
_RUNNER = """
import atexit, importlib, importlib.util, json, runpy, sys
site, target, argv0, *args = sys.argv[1:]
forbidden = tuple(json.loads(FORBIDDEN))
sys.path.insert(0, site)
available = sorted(n for n in forbidden if importlib.util.find_spec(n) is not None)
tried = []

class Refuse:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name.partition(".")[0] in forbidden:
            tried.append(name)
            raise ModuleNotFoundError(f"refused: {name}", name=name)
        return None

sys.meta_path.insert(0, Refuse)

def report():
    loaded = sorted(n for n in sys.modules if n.partition(".")[0] in forbidden)
    found = {"available": available, "tried": tried, "loaded": loaded}
    sys.stderr.write("\\nMARK" + json.dumps(found) + "\\n")

atexit.register(report)
sys.argv = [argv0, *args]
if target.endswith(".py"):
    runpy.run_path(target, run_name="__main__")
else:
    module, _, function = target.partition(":")
    sys.exit(getattr(importlib.import_module(module), function)())
"""


@dataclass(frozen=True)
class Distribution:
    """What pyproject.toml says pip installs: the package, its folder, command and needs."""

    package: str
    folder: Path
    packages: tuple[str, ...]
    package_data: Mapping[str, tuple[str, ...]]
    command: str
    entry: str
    dependencies: tuple[str, ...]
    version: str


def distribution() -> Distribution:
    """The contract package's distribution, as pyproject.toml declares it."""
    data: dict[str, Any] = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    project = data["project"]
    setup = data["tool"]["setuptools"]
    ((package, folder),) = setup["package-dir"].items()
    ((command, entry),) = project["scripts"].items()
    return Distribution(
        package=package,
        folder=ROOT / folder,
        packages=tuple(setup["packages"]),
        package_data={k: tuple(v) for k, v in data["tool"]["setuptools"]["package-data"].items()},
        command=command,
        entry=entry,
        dependencies=tuple(project["dependencies"]),
        version=project["version"],
    )


def _needed(requirements: Iterable[str]) -> list[metadata.Distribution]:
    """The installed distributions of ``requirements`` and of everything they need in turn."""
    found: dict[str, metadata.Distribution] = {}
    todo = [Requirement(text) for text in requirements]
    while todo:
        requirement = todo.pop()
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        name = requirement.name.lower().replace("_", "-")
        if name in found:
            continue
        dist = metadata.distribution(requirement.name)
        found[name] = dist
        todo.extend(Requirement(text) for text in dist.requires or ())
    return list(found.values())


def _top_level(dist: metadata.Distribution) -> set[str]:
    """The names a distribution puts at the top of site-packages (modules and packages)."""
    names: set[str] = set()
    for file in dist.files or ():
        first = file.parts[0]
        if first in {"..", "__pycache__"} or first.endswith(".dist-info"):
            continue
        names.add(first)
    return names


def build_site(target: Path) -> Path:
    """Fill ``target`` as pip would fill site-packages for the contract package alone."""
    dist = distribution()
    target.mkdir(parents=True, exist_ok=True)
    (target / dist.package).symlink_to(dist.folder, target_is_directory=True)
    for needed in _needed(dist.dependencies):
        for name in _top_level(needed):
            source = Path(str(needed.locate_file(name)))
            (target / name).symlink_to(source, target_is_directory=source.is_dir())
    return target


@dataclass(frozen=True)
class IsolatedRun:
    """A finished isolated run: its exit status, output and what it reached for."""

    returncode: int
    stdout: str
    stderr: str
    available: list[str]
    tried: list[str]
    loaded: list[str]


def isolated_command(
    site: Path, target: str, argv0: str, *args: str, env: Mapping[str, str] | None = None
) -> list[str]:
    """The command line of an isolated run (``target``: ``module:function`` or a script).

    ``-I`` ignores every ``PYTHON*`` variable, so the two that say where bytecode goes
    (``PYTHONDONTWRITEBYTECODE``, ``PYTHONPYCACHEPREFIX``, read from ``env`` or this process's
    environment) are passed on as options: an isolated run writes bytecode where any other
    run of this environment would, and nowhere else.
    """
    env = os.environ if env is None else env
    options = ["-I", "-S"]
    if env.get("PYTHONDONTWRITEBYTECODE"):
        options.append("-B")
    if env.get("PYTHONPYCACHEPREFIX"):
        options += ["-X", f"pycache_prefix={env['PYTHONPYCACHEPREFIX']}"]
    runner = _RUNNER.replace("FORBIDDEN", repr(json.dumps(FORBIDDEN))).replace("MARK", _MARK)
    return [sys.executable, *options, "-c", runner, str(site), target, argv0, *args]


def run_isolated(site: Path, target: str, argv0: str, *args: str) -> IsolatedRun:
    """Run ``target`` in an interpreter that sees only ``site`` and the standard library."""
    result = subprocess.run(
        isolated_command(site, target, argv0, *args),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    stderr, mark, report = result.stderr.rpartition("\n" + _MARK)
    if not mark:
        raise RuntimeError(f"the isolated interpreter did not report:\n{result.stderr}")
    found = json.loads(report)
    return IsolatedRun(
        returncode=result.returncode,
        stdout=result.stdout,
        stderr=stderr,
        available=found["available"],
        tried=found["tried"],
        loaded=found["loaded"],
    )
