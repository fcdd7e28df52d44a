"""The drawn scenes the starter Look cases look at: ``python -m evals.scenes`` draws every one
of them again as the pictures the repository holds (compared as pixels: another Pillow may
encode other bytes), and every scene a case names is one it draws."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
from PIL import Image

from custom_components.opennvr_workflows.evaluation.case_loader import DEFAULT_CASES
from evals import scenes

ROOT = Path(__file__).resolve().parents[2]
#: A picture a case file names.
PICTURE = re.compile(r"file: pictures/(\w+)\.jpg")


def pixels(path: Path) -> np.ndarray:
    with Image.open(path) as img:
        return np.asarray(img.convert("RGB"), dtype=np.float64)


def test_every_scene_is_drawn_again_as_the_committed_picture(tmp_path: Path) -> None:
    written = scenes.render_all(tmp_path / "pictures")
    assert {p.stem for p in written} == set(scenes.SCENES)
    for path in written:
        with Image.open(path) as img:
            assert img.size == scenes.SIZE
        difference = np.abs(pixels(path) - pixels(scenes.FOLDER / path.name)).mean()
        assert difference < 1.0, f"{path.name} is not the committed scene"


def test_the_command_line_draws_into_the_folder_it_is_given(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "evals.scenes", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    printed = [Path(line) for line in result.stdout.splitlines()]
    assert {p.name for p in printed} == {f"{name}.jpg" for name in scenes.SCENES}
    assert all(p.is_file() for p in printed)


def test_each_scene_a_starter_case_names_is_drawn() -> None:
    """A case's picture (its camera variants aside) is one of the drawn scenes."""
    named = {
        match.group(1)
        for path in DEFAULT_CASES.rglob("*.yaml")
        for match in PICTURE.finditer(path.read_text(encoding="utf-8"))
    }
    originals = {name for name in named if "__" not in name}
    assert originals
    assert originals <= set(scenes.SCENES)
