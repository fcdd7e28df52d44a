"""The HACS check passes on this repository and finds each problem HACS would refuse.

The checker is run as ``scripts/test`` runs it (a subprocess on the repository); the
refusals are shown on a copy of the repository's own files with one thing broken each.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "hacs_check.py"
DOMAIN = "opennvr_workflows"


def run(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), str(root)], capture_output=True, text=True, check=False
    )


def test_this_repository_passes() -> None:
    done = run(ROOT)
    assert done.returncode == 0, done.stderr
    assert "pass" in done.stdout


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """The files HACS reads, copied."""
    for name in ("hacs.json", "LICENSE", "README.md"):
        shutil.copy(ROOT / name, tmp_path / name)
    integration = tmp_path / "custom_components" / DOMAIN
    (integration / "brand").mkdir(parents=True)
    shutil.copy(ROOT / "custom_components" / DOMAIN / "manifest.json", integration)
    for image in ("icon.png", "icon@2x.png"):
        shutil.copy(ROOT / "custom_components" / DOMAIN / "brand" / image, integration / "brand")
    assert run(tmp_path).returncode == 0
    return tmp_path


def _edit_json(path: Path, change: Callable[[dict[str, object]], None]) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data), encoding="utf-8")


def _manifest(root: Path) -> Path:
    return root / "custom_components" / DOMAIN / "manifest.json"


BREAKS: dict[str, tuple[Callable[[Path], None], str]] = {
    "no licence": (lambda r: (r / "LICENSE").unlink(), "LICENSE: missing"),
    "unknown hacs key": (
        lambda r: _edit_json(r / "hacs.json", lambda d: d.update(version="1")),
        "'version' is not a key HACS knows",
    ),
    "hacs name missing": (
        lambda r: _edit_json(r / "hacs.json", lambda d: d.pop("name")),
        "'name' is required",
    ),
    "manifest without version": (
        lambda r: _edit_json(_manifest(r), lambda d: d.pop("version")),
        "'version' is required",
    ),
    "domain not the folder": (
        lambda r: _edit_json(_manifest(r), lambda d: d.update(domain="other")),
        "must be the folder's name",
    ),
    "unpinned requirement": (
        lambda r: _edit_json(_manifest(r), lambda d: d.update(requirements=["ollama"])),
        "pinned or bounded",
    ),
    "codeowner not a handle": (
        lambda r: _edit_json(_manifest(r), lambda d: d.update(codeowners=["someone"])),
        "@GitHub handles",
    ),
    "icon missing": (
        lambda r: (r / "custom_components" / DOMAIN / "brand" / "icon.png").unlink(),
        "brand/icon.png: missing",
    ),
    "icon of the wrong size": (
        lambda r: shutil.copy(
            r / "custom_components" / DOMAIN / "brand" / "icon@2x.png",
            r / "custom_components" / DOMAIN / "brand" / "icon.png",
        ),
        "512 x 512, wanted 256 x 256",
    ),
    "a second integration": (
        lambda r: shutil.copytree(
            r / "custom_components" / DOMAIN, r / "custom_components" / "another"
        ),
        "exactly one integration",
    ),
}


@pytest.mark.parametrize("case", sorted(BREAKS))
def test_each_problem_is_named(copy: Path, case: str) -> None:
    breaking, said = BREAKS[case]
    breaking(copy)
    done = run(copy)
    assert done.returncode == 1
    assert said in done.stderr
