#!/usr/bin/env python3
"""Time the command line on 50 workflow files: through the integration, and as ``workflow-v1``.

The files are the shipped templates and variants of them (renamed, their ``state`` and
cooldown changed, every seventh with a misspelt key, so the error path is timed too), written
to a temporary folder. Each way runs one process over all 50 files, as CI would:

* ``module``: ``python -m custom_components.opennvr_workflows.workflow validate``, which runs
  the integration's ``__init__`` and so imports Home Assistant;
* ``workflow-v1``: the console entry pyproject.toml installs, run in an interpreter that sees
  only the package and its declared dependencies (tests/workflow/standalone.py), as after
  ``pip install`` into a fresh environment.

Both must print the same problems and exit with the same status. Each way runs ``--runs``
times, alternating; the report gives the best and the median wall time, the CPU time of the
best run, the ratio, and the load average (the machine may be shared).

Python normally runs from bytecode: an installed Python ships its standard library compiled,
and pip compiles what it installs. A Python whose standard library has no ``.pyc`` files, with
``PYTHONDONTWRITEBYTECODE`` set, compiles every module it imports on every start. The
benchmark times both: ``as-is`` (the environment as it is) and ``bytecode`` (a bytecode cache
in a temporary folder, ``PYTHONPYCACHEPREFIX``, warmed by one run first). The last line printed
is one JSON object with every figure.

    .venv/bin/python scripts/bench_cli.py [--runs 5] [--only as-is|bytecode]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.workflow.standalone import build_site, distribution, isolated_command  # noqa: E402

FILES = 50
GOAL_S = 0.5
MODULE = "custom_components.opennvr_workflows.workflow"


def write_files(folder: Path) -> list[Path]:
    """The templates, then variants of them, up to :data:`FILES` files."""
    templates = sorted((distribution().folder / "templates").glob("*.yaml"))
    paths: list[Path] = []
    for index in range(FILES):
        source = templates[index % len(templates)]
        text = source.read_text(encoding="utf-8")
        if index >= len(templates):
            text = re.sub(r"(?m)^name: (.*)$", rf"name: \1 (variant {index})", text, count=1)
            text = re.sub(r"(?m)^state: \w+$", "state: disabled", text, count=1)
            text = re.sub(r"cooldown: \d+m", f"cooldown: {10 + index}m", text, count=1)
            if index % 7 == 0:
                text = text.replace("\ndescription:", "\ndescripton:", 1)
        path = folder / f"{index:02d}_{source.name}"
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


@dataclass(frozen=True)
class Run:
    """One process over all the files."""

    wall_s: float
    cpu_s: float
    returncode: int
    stdout: str


def run_once(command: Sequence[str], env: Mapping[str, str]) -> Run:
    """Run ``command`` once; wall time, and the CPU time it and its children used."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(
        command, cwd=ROOT, env=dict(env), capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if result.returncode not in {0, 1}:
        raise SystemExit(f"{command[:3]} failed ({result.returncode}):\n{result.stderr}")
    return Run(wall, cpu, result.returncode, result.stdout)


def stdlib_compiled() -> bool:
    """Whether the standard library has bytecode (probed on a module every run imports)."""
    spec = importlib.util.find_spec("argparse")
    cached = spec.cached if spec is not None else None
    return cached is not None and Path(cached).is_file()


def environment(condition: str, cache: Path) -> dict[str, str]:
    """The environment for a condition: as it is, or with a bytecode cache of its own."""
    env = dict(os.environ)
    if condition == "bytecode":
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(cache)
    return env


def measure(
    commands: Mapping[str, Sequence[str]], env: Mapping[str, str], runs: int, warm: bool
) -> dict[str, list[Run]]:
    """Each command ``runs`` times, alternating; after one untimed run each when ``warm``."""
    if warm:
        for command in commands.values():
            run_once(command, env)
    results: dict[str, list[Run]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, command in commands.items():
            results[name].append(run_once(command, env))
    return results


def summary(runs: list[Run]) -> dict[str, float]:
    best = min(runs, key=lambda run: run.wall_s)
    return {
        "best_s": round(best.wall_s, 3),
        "median_s": round(statistics.median(run.wall_s for run in runs), 3),
        "cpu_s": round(best.cpu_s, 3),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="timed runs of each way")
    parser.add_argument("--only", choices=["as-is", "bytecode"], help="time one condition")
    args = parser.parse_args()
    conditions = [args.only] if args.only else ["as-is", "bytecode"]
    dist = distribution()
    report: dict[str, object] = {
        "files": FILES,
        "goal_s": GOAL_S,
        "runs": args.runs,
        "stdlib_bytecode": stdlib_compiled(),
        "dont_write_bytecode": bool(os.environ.get("PYTHONDONTWRITEBYTECODE")),
        "python": sys.version.split()[0],
    }
    with tempfile.TemporaryDirectory(prefix="bench_cli_") as tmp:
        folder = Path(tmp)
        (folder / "files").mkdir()
        files = [str(path) for path in write_files(folder / "files")]
        site = build_site(folder / "site-packages")
        module = [sys.executable, "-m", MODULE, "validate", *files]
        print(
            f"{FILES} files, {args.runs} runs each; standard library bytecode: "
            f"{'yes' if report['stdlib_bytecode'] else 'no'}, PYTHONDONTWRITEBYTECODE: "
            f"{'set' if report['dont_write_bytecode'] else 'unset'}"
        )
        for condition in conditions:
            env = environment(condition, folder / "pycache")
            commands = {
                "module": module,
                dist.command: isolated_command(
                    site, dist.entry, dist.command, "validate", *files, env=env
                ),
            }
            load_before = os.getloadavg()[0]
            results = measure(commands, env, args.runs, warm=condition == "bytecode")
            load_after = os.getloadavg()[0]
            old, new = (results[name] for name in commands)
            if {(r.returncode, r.stdout) for r in old + new} != {
                (old[0].returncode, old[0].stdout)
            }:
                raise SystemExit("the two ways printed different problems or exit statuses")
            figures = {name: summary(runs) for name, runs in results.items()}
            ratio = figures["module"]["best_s"] / figures[dist.command]["best_s"]
            figures["ratio"] = {"best": round(ratio, 1)}
            figures["load"] = {"before": round(load_before, 2), "after": round(load_after, 2)}
            report[condition] = figures
            print(f"{condition} (load average {load_before:.2f} -> {load_after:.2f}):")
            for name in commands:
                f = figures[name]
                print(
                    f"  {name:12} best {f['best_s']:.3f} s  median {f['median_s']:.3f} s  "
                    f"cpu {f['cpu_s']:.3f} s"
                )
            verdict = "under" if figures[dist.command]["best_s"] < GOAL_S else "over"
            print(f"  {dist.command} is {ratio:.1f}x faster; {verdict} the {GOAL_S} s goal")
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
