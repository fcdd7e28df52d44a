"""What HACS checks of an integration repository that can be checked without GitHub.

HACS's own validation (its GitHub action) also reads the repository's description, topics
and issues setting on GitHub; those are settings, not files, and are left out. The rest is
here, so `scripts/test` fails before a release that HACS would refuse:

* ``hacs.json`` at the root: an object with only the keys HACS knows, each of its type,
  ``name`` required, ``homeassistant`` a version;
* exactly one integration under ``custom_components/``, whose ``manifest.json`` has what a
  custom integration needs (domain = its folder, name, a version, documentation and issue
  tracker addresses, code owners as GitHub handles, requirements pinned or bounded);
* a ``LICENSE`` and a ``README.md`` at the root (HACS renders the README: ``render_readme``);
* the brand images HACS and Home Assistant show: ``brand/icon.png`` (256 x 256) and
  ``brand/icon@2x.png`` (512 x 512), PNG.

Usage: ``python scripts/hacs_check.py [ROOT]``; prints each problem with its file and exits
1 when there is one.
"""

from __future__ import annotations

import json
import re
import struct
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

#: hacs.json's keys (HACS's publishing documentation) and the type each takes.
HACS_KEYS: Final[Mapping[str, type | tuple[type, ...]]] = {
    "name": str,
    "content_in_root": bool,
    "zip_release": bool,
    "filename": str,
    "hide_default_branch": bool,
    "country": (str, list),
    "homeassistant": str,
    "hacs": str,
    "persistent_directory": str,
    "render_readme": bool,
}
MANIFEST_REQUIRED: Final = (
    "domain",
    "name",
    "version",
    "documentation",
    "issue_tracker",
    "codeowners",
)
IOT_CLASSES: Final = frozenset(
    {
        "assumed_state",
        "calculated",
        "cloud_polling",
        "cloud_push",
        "local_polling",
        "local_push",
    }
)
INTEGRATION_TYPES: Final = frozenset(
    {"device", "entity", "hardware", "helper", "hub", "service", "system", "virtual"}
)
BRAND: Final = {"icon.png": (256, 256), "icon@2x.png": (512, 512)}
_VERSION: Final = re.compile(r"\d+(\.\d+){1,2}([a-z0-9.+-]*)?")
_URL: Final = re.compile(r"https://[^\s/]+\.[^\s]+")
_HANDLE: Final = re.compile(r"@[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:/[A-Za-z0-9_.-]+)?")
_REQUIREMENT: Final = re.compile(r"[A-Za-z0-9_.\-\[\],]+\s*(==|>=|~=|<=|<|>)\s*\S+")


def check(root: Path) -> list[str]:
    """Every problem HACS would find in the repository at ``root`` (none: ``[]``)."""
    problems: list[str] = []
    problems += _hacs_json(root)
    for name in ("LICENSE", "README.md"):
        path = root / name
        if not path.is_file() or not path.read_text(encoding="utf-8").strip():
            problems.append(f"{name}: missing or empty at the repository's root")
    integrations = sorted(
        p for p in (root / "custom_components").glob("*") if (p / "manifest.json").is_file()
    )
    if len(integrations) != 1:
        found = ", ".join(p.name for p in integrations) or "none"
        problems.append(f"custom_components/: HACS wants exactly one integration ({found})")
    for folder in integrations:
        problems += _manifest(folder)
        problems += _brand(folder)
    return problems


def _read_json(path: Path, problems: list[str]) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        problems.append(f"{path.name}: missing")
    except ValueError as err:
        problems.append(f"{path.name}: not JSON: {err}")
    return None


def _hacs_json(root: Path) -> list[str]:
    problems: list[str] = []
    data = _read_json(root / "hacs.json", problems)
    if data is None:
        return problems
    if not isinstance(data, dict):
        return ["hacs.json: must be an object"]
    for key, value in data.items():
        wanted = HACS_KEYS.get(key)
        if wanted is None:
            problems.append(f"hacs.json: {key!r} is not a key HACS knows")
        elif not isinstance(value, wanted):
            problems.append(f"hacs.json: {key!r} has the wrong type ({type(value).__name__})")
    if not isinstance(data.get("name"), str) or not data["name"].strip():
        problems.append("hacs.json: 'name' is required")
    version = data.get("homeassistant")
    if isinstance(version, str) and not _VERSION.fullmatch(version):
        problems.append(f"hacs.json: 'homeassistant' is not a version ({version!r})")
    if data.get("zip_release") and not data.get("filename"):
        problems.append("hacs.json: 'zip_release' needs 'filename'")
    return problems


def _manifest(folder: Path) -> list[str]:
    where = f"custom_components/{folder.name}/manifest.json"
    problems: list[str] = []
    data = _read_json(folder / "manifest.json", problems)
    if not isinstance(data, dict):
        return [f"{where}: {p}" for p in problems] or [f"{where}: must be an object"]
    for key in MANIFEST_REQUIRED:
        if key not in data:
            problems.append(f"{where}: {key!r} is required for a custom integration")
    checks: list[tuple[str, Callable[[Any], bool], str]] = [
        ("domain", lambda v: v == folder.name, f"must be the folder's name {folder.name!r}"),
        ("version", lambda v: isinstance(v, str) and bool(_VERSION.fullmatch(v)), "a version"),
        ("documentation", lambda v: isinstance(v, str) and bool(_URL.fullmatch(v)), "an https URL"),
        ("issue_tracker", lambda v: isinstance(v, str) and bool(_URL.fullmatch(v)), "an https URL"),
        (
            "codeowners",
            lambda v: isinstance(v, list) and all(_HANDLE.fullmatch(str(h)) for h in v),
            "a list of @GitHub handles",
        ),
        (
            "requirements",
            lambda v: isinstance(v, list) and all(_REQUIREMENT.fullmatch(str(r)) for r in v),
            "a list of pinned or bounded requirements",
        ),
        ("iot_class", lambda v: v in IOT_CLASSES, f"one of {sorted(IOT_CLASSES)}"),
        (
            "integration_type",
            lambda v: v in INTEGRATION_TYPES,
            f"one of {sorted(INTEGRATION_TYPES)}",
        ),
        ("config_flow", lambda v: isinstance(v, bool), "true or false"),
    ]
    for key, holds, wanted in checks:
        if key in data and not holds(data[key]):
            problems.append(f"{where}: {key!r} must be {wanted} ({data[key]!r})")
    return problems


def _brand(folder: Path) -> list[str]:
    problems: list[str] = []
    for name, size in BRAND.items():
        path = folder / "brand" / name
        where = f"custom_components/{folder.name}/brand/{name}"
        if not path.is_file():
            problems.append(f"{where}: missing")
            continue
        found = _png_size(path.read_bytes())
        if found is None:
            problems.append(f"{where}: not a PNG")
        elif found != size:
            problems.append(f"{where}: {found[0]} x {found[1]}, wanted {size[0]} x {size[1]}")
    return problems


def _png_size(data: bytes) -> tuple[int, int] | None:
    """A PNG's width and height from its header chunk (None: not a PNG)."""
    if len(data) < 24 or data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        return None
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parents[1]
    problems = check(root)
    for problem in problems:
        print(f"hacs: {problem}", file=sys.stderr)
    if not problems:
        print("hacs: hacs.json, manifest.json, LICENSE, README.md and brand images pass")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
