"""``scripts/test_tools`` installs what ``scripts/test`` runs besides Python on a fresh
Debian machine, Node and npm for the frontend bundle check among them: run with stand-in
programs on ``PATH`` (``apt-get`` writes down what it was asked, ``id`` says who runs it)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).parents[1] / "scripts" / "test_tools"
#: What a machine with everything but Node has (``ldconfig`` lists libturbojpeg).
PRESENT = ("mosquitto", "nats-server", "chromium")


def machine(tmp_path: Path, *, have: tuple[str, ...], uid: int = 0) -> Path:
    """A ``PATH`` folder with the programs of ``have``, ``id``, ``apt-get`` and ``ldconfig``."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    grep = shutil.which("grep")
    assert grep is not None
    (bin_dir / "grep").symlink_to(grep)
    stubs = {
        "id": f"echo {uid}",
        "apt-get": f'echo "$@" >> {tmp_path / "apt.log"}',
        "ldconfig": 'echo "libturbojpeg.so.0 (libc6,x86-64) => /usr/lib/libturbojpeg.so.0"',
        **dict.fromkeys(have, "exit 0"),
    }
    for name, body in stubs.items():
        path = bin_dir / name
        path.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
        path.chmod(0o755)
    return bin_dir


def run(tmp_path: Path, bin_dir: Path) -> subprocess.CompletedProcess[str]:
    bash = shutil.which("bash")
    assert bash is not None
    return subprocess.run(
        [bash, str(SCRIPT)],
        env={"PATH": str(bin_dir)},
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )


def installed(tmp_path: Path) -> list[str]:
    log = tmp_path / "apt.log"
    lines = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    return [word for line in lines if line.startswith("install") for word in line.split()]


@pytest.mark.parametrize(
    ("have", "wanted"),
    [
        (PRESENT, ["nodejs", "npm"]),  # a fresh machine: Debian's Node and its npm
        ((*PRESENT, "node"), ["npm"]),  # Debian's nodejs without npm
        ((*PRESENT, "node", "npm"), []),  # Node with its own npm: left as it is
    ],
)
def test_node_and_npm_are_installed_when_missing(
    tmp_path: Path, have: tuple[str, ...], wanted: list[str]
) -> None:
    done = run(tmp_path, machine(tmp_path, have=have))
    assert done.returncode == 0, done.stderr
    packages = [w for w in installed(tmp_path) if not w.startswith("-") and w != "install"]
    assert packages == wanted


def test_without_root_it_names_what_to_install(tmp_path: Path) -> None:
    done = run(tmp_path, machine(tmp_path, have=("mosquitto", "nats-server"), uid=1000))
    assert done.returncode == 1
    assert "please install: chromium nodejs npm" in done.stderr
    assert installed(tmp_path) == []
