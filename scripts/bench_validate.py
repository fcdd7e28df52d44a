#!/usr/bin/env python3
"""How the validator's time grows with the size of a file, for shapes that were once slow.

Each shape is generated at size n and 2n, inside the reader's caps (256 KiB, 20,000 values,
64 levels), and validated from text; the best of a few runs is printed side by side with the
ratio. A linear validator doubles (ratio about 2); a quadratic part shows as a ratio near 4.
The load average is printed too, since other work on the machine skews the times.

    .venv/bin/python scripts/bench_validate.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from custom_components.opennvr_workflows.workflow import validate_text
from custom_components.opennvr_workflows.workflow.yaml_loader import (
    MAX_NODES,
    MAX_TEXT_BYTES,
)

HEAD = "contract: workflow.v1\nname: Bench\nwhen:\n  button: {}\nthen:\n"


def flat_steps(n: int) -> str:
    """n small steps in one list (over the step cap: refused, but checked fast)."""
    return HEAD + "".join(f"  - log: step {i}\n" for i in range(n))


def nested_steps(n: int) -> str:
    """n steps spread over nested `if` paths, no list longer than its cap."""
    lines = [HEAD]
    per = 30
    for i in range(0, n, per):
        lines.append("  - if: [ { value: { of: '{camera}', is: x } } ]\n    then:\n")
        lines.extend(f"      - log: step {j}\n" for j in range(i, min(i + per, n)))
    return "".join(lines)


def unsortable_list(n: int) -> str:
    """A uniqueItems list of n distinct mappings (the library compared every pair)."""
    items = ", ".join(f"{{ k: {i} }}" for i in range(n))
    return HEAD + f"  - ask_person: {{ who: role:owner, message: Hi, replies: [{items}] }}\n"


def mixed_list(n: int) -> str:
    """A uniqueItems list of numbers and text, which cannot be sorted together."""
    items = ", ".join(str(i) if i % 2 else f"t{i}" for i in range(n))
    return HEAD + f"  - ask_person: {{ who: role:owner, message: Hi, replies: [{items}] }}\n"


def many_errors(n: int) -> str:
    """n steps that are not exactly one kind, each with a bad value inside."""
    return HEAD + "".join(f"  - {{ nothing{i}: {{ a: 1 }} }}\n" for i in range(n))


def many_keys(n: int) -> str:
    """One mapping with n unknown keys."""
    return HEAD + "  - log: hi\n" + "".join(f"k{i}: 1\n" for i in range(n))


SHAPES: dict[str, tuple[Callable[[int], str], int]] = {
    "flat steps": (flat_steps, 4_000),
    "nested steps": (nested_steps, 4_000),
    "unsortable list": (unsortable_list, 3_000),
    "mixed list": (mixed_list, 6_000),
    "many errors": (many_errors, 3_000),
    "many keys": (many_keys, 6_000),
}


def best_time(text: str, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        validate_text(text)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'shape':<16} {'n':>6} {'t(n) ms':>9} {'t(2n) ms':>9} {'ratio':>6}")
    results: dict[str, dict[str, float]] = {}
    for name, (make, n) in SHAPES.items():
        small, large = make(n), make(2 * n)
        assert len(large.encode()) <= MAX_TEXT_BYTES, name
        report = validate_text(large)
        assert not any(p.code == "WF-YAML-TOO-MANY-NODES" for p in report.problems), (
            f"{name} at 2n is over {MAX_NODES} values"
        )
        t1, t2 = best_time(small, args.repeat), best_time(large, args.repeat)
        results[name] = {"n": n, "t_n": t1, "t_2n": t2, "ratio": t2 / t1}
        print(f"{name:<16} {n:>6} {t1 * 1000:>9.1f} {t2 * 1000:>9.1f} {t2 / t1:>6.2f}")
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
