"""The shipped Look cases as a camera delivers them: night IR, blur, rain, low resolution,
heavy compression and a fisheye lens, drawn reproducibly from the cases' own pictures.

The starter pictures are clean drawings; a porch camera at dusk through rain is not. A
model that decides the drawings right may still miss the same scene in infrared grey or
behind motion blur, and the gate that grants Investigate steps should see that. So each
shipped Look case with pictures gets one variant case per :data:`VARIANTS` kind: the same
step, event and expectation (the scene's truth does not change), its pictures passed
through that kind's degradation, and ``shows`` saying how the picture was delivered.

``python -m evals.variants`` writes the pictures (``pictures/<picture>__<kind>.jpg``) and
the case files (``look/<case file>__<kind>.yaml``, marked ``variant: {of, kind}``) into
the integration's cases folder. Every random choice (noise, rain streaks) comes from a
generator seeded by the picture's name and the kind, so a second run draws the same
pixels; as with :mod:`evals.scenes`, another Pillow or numpy may encode other bytes, which
changes the request keys of a replay transcript (record again after redrawing).
"""

from __future__ import annotations

import io
import sys
import zlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Final

import numpy as np
import yaml
from PIL import Image, ImageDraw, ImageFilter

from custom_components.opennvr_workflows.evaluation.case_loader import DEFAULT_CASES

#: The marker that names a variant's files: ``<original>__<kind>``.
SEPARATOR: Final = "__"
QUALITY: Final = 80

type Pixels = np.ndarray[Any, np.dtype[np.float64]]


@dataclass(frozen=True)
class Variant:
    """One way a camera delivers a scene: its kind, what a reader is told the picture
    looks like, and the degradation itself (picture and a seeded generator in, picture
    out); ``quality`` is the JPEG quality it is saved at."""

    kind: str
    shows: str
    about: str
    degrade: Callable[[Image.Image, np.random.Generator], Image.Image]
    quality: int = QUALITY


def _pixels(img: Image.Image) -> Pixels:
    return np.asarray(img.convert("RGB"), dtype=np.float64)


def _image(pixels: Pixels) -> Image.Image:
    return Image.fromarray(np.clip(pixels, 0, 255).round().astype(np.uint8), "RGB")


def _radius(height: int, width: int) -> Pixels:
    """Each pixel's distance from the centre, 1.0 at the middle of the long side's edge."""
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float64)
    half = max(width, height) / 2.0
    radius: Pixels = np.hypot((xs - (width - 1) / 2.0) / half, (ys - (height - 1) / 2.0) / half)
    return radius


def night_ir(img: Image.Image, rng: np.random.Generator) -> Image.Image:
    """Infrared at night: grey, dark, bright where the camera's IR lamp reaches (the
    middle), noisy and a little soft."""
    rgb = _pixels(img)
    grey = rgb @ np.array([0.30, 0.59, 0.11])
    grey = 255.0 * (grey / 255.0) ** 1.5 * 0.85
    lamp = np.clip(1.2 - 0.75 * _radius(*grey.shape), 0.35, 1.2)
    grey = grey * lamp + rng.normal(0.0, 7.0, grey.shape)
    out = _image(np.repeat(grey[..., None], 3, axis=2))
    return out.filter(ImageFilter.GaussianBlur(0.7))


def motion_blur(img: Image.Image, rng: np.random.Generator) -> Image.Image:
    """Something moved across the frame during the exposure: a 15-pixel horizontal smear."""
    rgb = _pixels(img)
    length = 15
    padded = np.pad(rgb, ((0, 0), (length // 2, length // 2), (0, 0)), mode="edge")
    smeared = sum(padded[:, i : i + rgb.shape[1]] for i in range(length)) / length
    return _image(np.asarray(smeared))


def rain(img: Image.Image, rng: np.random.Generator) -> Image.Image:
    """Rain in front of the lens: a duller, darker scene behind pale slanted streaks."""
    rgb = _pixels(img)
    grey = rgb.mean(axis=2, keepdims=True)
    dull = (0.6 * rgb + 0.4 * grey) * 0.82
    base = _image(dull)
    streaks = Image.new("L", base.size, 0)
    draw = ImageDraw.Draw(streaks)
    width, height = base.size
    for _ in range(220):
        x, y = rng.uniform(-40, width), rng.uniform(-30, height)
        length = rng.uniform(10, 28)
        draw.line((x, y, x + 0.3 * length, y + length), fill=int(rng.uniform(90, 170)), width=1)
    streaks = streaks.filter(ImageFilter.GaussianBlur(0.6))
    pale = Image.new("RGB", base.size, (215, 218, 225))
    return Image.composite(pale, base, streaks)


def low_resolution(img: Image.Image, rng: np.random.Generator) -> Image.Image:
    """A sub-stream: a third of the width and height, as a low-bandwidth stream sends it."""
    return img.resize((max(1, img.width // 3), max(1, img.height // 3)), Image.Resampling.BOX)


def jpeg_heavy(img: Image.Image, rng: np.random.Generator) -> Image.Image:
    """Unchanged here: the picture is saved at a very low JPEG quality (blocks, smearing),
    as a camera squeezing its stream onto a weak link does."""
    return img.copy()


def fisheye(img: Image.Image, rng: np.random.Generator) -> Image.Image:
    """A wide-angle lens: the middle of the scene enlarged and its edges squeezed (barrel
    distortion), straight lines bowed, cropped so the whole frame is still in view with no
    dark corners."""
    rgb = _pixels(img)
    height, width = rgb.shape[:2]
    cx, cy, half = (width - 1) / 2.0, (height - 1) / 2.0, max(width, height) / 2.0
    strength = 0.35
    crop = _corner_fit(strength, cx / half, cy / half)
    ys, xs = np.mgrid[0:height, 0:width].astype(np.float64)
    u, v = (xs - cx) / half * crop, (ys - cy) / half * crop
    scale = 1.0 + strength * (u * u + v * v)
    sx = np.clip(np.round(cx + u * scale * half), 0, width - 1).astype(int)
    sy = np.clip(np.round(cy + v * scale * half), 0, height - 1).astype(int)
    return _image(rgb[sy, sx])


def _corner_fit(strength: float, x: float, y: float) -> float:
    """The crop at which the frame's corner (``x``, ``y`` from the centre) lands exactly on
    the source's corner: ``c * (1 + strength * c**2 * (x**2 + y**2)) == 1`` (bisection)."""
    lo, hi = 0.0, 1.0
    for _ in range(40):
        mid = (lo + hi) / 2.0
        if mid * (1.0 + strength * mid * mid * (x * x + y * y)) > 1.0:
            hi = mid
        else:
            lo = mid
    return lo


VARIANTS: Final[tuple[Variant, ...]] = (
    Variant(
        "night_ir",
        "Seen at night in infrared: grey, dark at the edges, grainy.",
        "at night in infrared grey",
        night_ir,
    ),
    Variant(
        "motion_blur",
        "Smeared sideways by motion blur.",
        "with motion blur",
        motion_blur,
    ),
    Variant(
        "rain",
        "Through rain: duller, darker, with pale streaks over everything.",
        "through rain streaks",
        rain,
    ),
    Variant(
        "low_res",
        "From a low-resolution sub-stream: a third of the size, small details lost.",
        "at a third of the resolution",
        low_resolution,
    ),
    Variant(
        "jpeg",
        "Heavily compressed: blocky, with smeared edges and colours.",
        "heavily JPEG-compressed",
        jpeg_heavy,
        quality=7,
    ),
    Variant(
        "fisheye",
        "Through a wide-angle fisheye lens: the middle enlarged, the edges squeezed and bowed.",
        "through a wide-angle fisheye lens, cropped",
        fisheye,
    ),
)


def seed_of(name: str, kind: str) -> int:
    """A stable seed per picture and kind (Python's own ``hash`` changes per process)."""
    return zlib.crc32(f"{name}:{kind}".encode())


def variant_picture(source: Path, variant: Variant) -> bytes:
    """``source`` delivered as ``variant`` says, as JPEG bytes."""
    with Image.open(source) as img:
        out = variant.degrade(
            img.convert("RGB"), np.random.default_rng(seed_of(source.stem, variant.kind))
        )
    data = io.BytesIO()
    out.save(data, format="JPEG", quality=variant.quality, optimize=True)
    return data.getvalue()


def is_variant(path: Path) -> bool:
    """Whether a case or picture file is a variant this script made."""
    return SEPARATOR in path.stem


def original_cases(root: Path) -> Iterator[tuple[Path, dict[str, Any]]]:
    """The Look case files with pictures that are not variants themselves."""
    for path in sorted((root / "look").glob("*.yaml")):
        if is_variant(path):
            continue
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and (data.get("inputs") or {}).get("pictures"):
            yield path, data


def variant_case(
    data: Mapping[str, Any], variant: Variant, file_of: Callable[[str], str]
) -> dict[str, Any]:
    """The case ``data`` as ``variant`` delivers its pictures (``file_of``: a picture's
    file as the case names it, to the variant's)."""
    case = dict(data)
    case["id"] = f"{data['id']}-{variant.kind.replace('_', '-')}"
    case["about"] = f"{str(data['about']).rstrip('.')}, {variant.about}."
    case["variant"] = {"of": str(data["id"]), "kind": variant.kind}
    inputs = dict(data["inputs"])
    inputs["pictures"] = {
        camera: [
            {
                "file": file_of(str(p["file"])),
                "shows": f"{str(p['shows']).rstrip()} {variant.shows}",
            }
            for p in pictures
        ]
        for camera, pictures in data["inputs"]["pictures"].items()
    }
    case["inputs"] = inputs
    return case


def _variant_of(file: str, *, kind: str) -> str:
    return variant_file(file, kind)


def variant_file(file: str, kind: str) -> str:
    """A picture's file as a case names it (``pictures/x.jpg``), for ``kind``."""
    path = Path(file)
    return str(path.with_name(f"{path.stem}{SEPARATOR}{kind}.jpg").as_posix())


def case_text(source: Path, case: Mapping[str, Any]) -> str:
    head = (
        f"# Made by `python -m evals.variants` from {source.name}; "
        "edit that case and run the script again.\n"
    )
    return head + yaml.safe_dump(dict(case), sort_keys=False, allow_unicode=True, width=100)


def render_all(root: Path = DEFAULT_CASES) -> list[Path]:
    """Write every variant picture and case file under ``root``; the paths written."""
    written: list[Path] = []
    for source, data in original_cases(root):
        for variant in VARIANTS:
            for pictures in data["inputs"]["pictures"].values():
                for picture in pictures:
                    target = root / variant_file(str(picture["file"]), variant.kind)
                    if target not in written:
                        target.write_bytes(variant_picture(root / str(picture["file"]), variant))
                        written.append(target)
            case = variant_case(data, variant, partial(_variant_of, kind=variant.kind))
            path = source.with_name(f"{source.stem}{SEPARATOR}{variant.kind}.yaml")
            path.write_text(case_text(source, case), encoding="utf-8")
            written.append(path)
    return written


if __name__ == "__main__":
    for p in render_all(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_CASES):
        print(p)
