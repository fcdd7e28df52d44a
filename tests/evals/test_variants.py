"""The shipped Look cases as a camera delivers them: reproducible, registered, degraded.

``python -m evals.variants`` drew the committed variant pictures and case files; drawing
them again must give the same cases and the same pictures (compared as pixels: another
Pillow may encode other bytes), every variant must load as a case of the look suite, and
each kind must really do to the picture what its name says.
"""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from custom_components.opennvr_workflows.evaluation.case_loader import (
    DEFAULT_CASES,
    case_schema,
    load_suite,
)
from custom_components.opennvr_workflows.evaluation.case_model import StepCase
from evals import variants
from evals.cli import main


def pixels(data: bytes | Path) -> np.ndarray:
    raw = data.read_bytes() if isinstance(data, Path) else data
    with Image.open(io.BytesIO(raw)) as img:
        return np.asarray(img.convert("RGB"), dtype=np.float64)


@pytest.fixture(scope="module")
def redrawn(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped cases with every variant drawn again (originals only copied)."""
    root = tmp_path_factory.mktemp("cases")
    for folder in ("look", "pictures"):
        (root / folder).mkdir()
        for path in (DEFAULT_CASES / folder).iterdir():
            if not variants.is_variant(path):
                shutil.copy(path, root / folder / path.name)
    variants.render_all(root)
    return root


def test_drawing_again_gives_the_committed_cases_and_pictures(redrawn: Path) -> None:
    made = sorted(p.name for p in (redrawn / "look").glob(f"*{variants.SEPARATOR}*.yaml"))
    committed = sorted(p.name for p in (DEFAULT_CASES / "look").glob(f"*{variants.SEPARATOR}*"))
    assert made == committed
    for name in made:
        assert (redrawn / "look" / name).read_text() == (DEFAULT_CASES / "look" / name).read_text()
    pictures = sorted((redrawn / "pictures").glob(f"*{variants.SEPARATOR}*.jpg"))
    assert pictures
    for path in pictures:
        shipped = DEFAULT_CASES / "pictures" / path.name
        assert shipped.is_file(), path.name
        assert np.abs(pixels(path) - pixels(shipped)).mean() < 1.0, path.name


def test_every_look_case_with_pictures_has_each_variant_and_all_load() -> None:
    look = [c for c in load_suite(DEFAULT_CASES, "look") if isinstance(c, StepCase)]
    originals = [c for c in look if c.variant_of is None and c.pictures]
    assert len(originals) >= 10
    kinds = {v.kind for v in variants.VARIANTS}
    by_original = {o.id: {c.variant_kind for c in look if c.variant_of == o.id} for o in originals}
    assert by_original == {o.id: kinds for o in originals}
    for case in look:
        if case.variant_of is None:
            continue
        original = next(o for o in originals if o.id == case.variant_of)
        # The scene's truth does not change with how it is delivered.
        assert (case.step, case.expect, case.values) == (
            original.step,
            original.expect,
            original.values,
        )
        assert all(
            p.path.name.endswith(f"{variants.SEPARATOR}{case.variant_kind}.jpg")
            for pics in case.pictures.values()
            for p in pics
        )
    assert main(["check"]) == 0


def test_the_schema_knows_every_kind() -> None:
    schema = case_schema()
    assert set(schema["$defs"]["variant"]["properties"]["kind"]["enum"]) == {
        v.kind for v in variants.VARIANTS
    }
    assert json.dumps(schema)  # still plain JSON


@pytest.fixture(scope="module")
def source() -> Path:
    return DEFAULT_CASES / "pictures" / "gate_taxi.jpg"


def degraded(source: Path, kind: str) -> np.ndarray:
    variant = next(v for v in variants.VARIANTS if v.kind == kind)
    return pixels(variants.variant_picture(source, variant))


def test_night_ir_is_grey_and_darker(source: Path) -> None:
    night, day = degraded(source, "night_ir"), pixels(source)
    spread = np.abs(night - night.mean(axis=2, keepdims=True)).mean()
    assert spread < 2.0, "infrared has no colour"
    assert night.mean() < day.mean() * 0.8


def test_motion_blur_smears_sideways(source: Path) -> None:
    blurred, sharp = degraded(source, "motion_blur"), pixels(source)
    sideways = lambda a: np.abs(np.diff(a, axis=1)).mean()  # noqa: E731
    upways = lambda a: np.abs(np.diff(a, axis=0)).mean()  # noqa: E731
    assert sideways(blurred) < sideways(sharp) * 0.6
    assert upways(blurred) > upways(sharp) * 0.6  # vertical edges mostly stay


def test_rain_dulls_the_scene_behind_pale_streaks(source: Path) -> None:
    rain, dry = degraded(source, "rain"), pixels(source)
    saturation = lambda a: (a.max(axis=2) - a.min(axis=2)).mean()  # noqa: E731
    assert saturation(rain) < saturation(dry) * 0.8
    # The scene is darker behind the rain: only a streak makes a pixel brighter.
    streaks = (rain.mean(axis=2) - dry.mean(axis=2)) > 10
    assert 0.005 < streaks.mean() < 0.5


def test_low_resolution_is_a_third_of_the_size(source: Path) -> None:
    small, full = degraded(source, "low_res"), pixels(source)
    assert small.shape[:2] == (full.shape[0] // 3, full.shape[1] // 3)


def test_heavy_compression_loses_detail_and_bytes(source: Path) -> None:
    heavy = next(v for v in variants.VARIANTS if v.kind == "jpeg")
    data = variants.variant_picture(source, heavy)
    out = io.BytesIO()
    Image.open(source).save(out, format="JPEG", quality=variants.QUALITY)
    assert len(data) < len(out.getvalue()) * 0.6
    assert np.abs(pixels(data) - pixels(source)).mean() > 2.0


def test_fisheye_enlarges_the_middle_and_keeps_the_frame_filled(source: Path) -> None:
    bent, flat = degraded(source, "fisheye"), pixels(source)
    assert bent.shape == flat.shape
    height, width = flat.shape[:2]
    for y, x in ((0, 0), (0, width - 1), (height - 1, 0), (height - 1, width - 1)):
        assert np.abs(bent[y, x] - flat[y, x]).max() < 40, "no dark corners: the frame is cut"
    assert np.abs(bent - flat).mean() > 5.0
