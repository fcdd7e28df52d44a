#!/usr/bin/env python3
"""What preparing a camera JPEG for the vision model costs: the Look step's own overhead.

``ai.images.prepare_image`` turns a snapshot into the JPEG the model gets. Three ways are
timed side by side, interleaved in one run (so a change in the machine's load hits all
three alike), on a 1920x1080 and a 3840x2160 JPEG made here from a picture with detail
(gradients, a sine pattern, outlined and filled boxes, text, a slight blur and sensor-like
noise; quality 85 and 4:2:0, as a camera sends, about 360 KB and 1 MB):

- ``old``: the previous Pillow path, copied below: JPEG draft mode (the decoder scales by
  1/2, 1/4 or 1/8, staying above the target), then a bicubic resize to exactly the target.
- ``new``: ``prepare_image`` as it is: libjpeg-turbo scales inside the decoder by its
  largest M/8 factor that fits, and re-encodes from the decoder's planes, no resample
  (where that factor leaves under three quarters of the target, the 4K frame, Pillow's path).
- ``fallback``: ``prepare_image`` with libjpeg-turbo made unavailable, so the Pillow path
  (draft mode, then its resize) as a host without the library runs it.

Each prints the median and p99 in milliseconds over ``--n`` prepares (wall time of the call
in this thread), the load average when the figure was taken, and the output's size and
bytes. The target is the default working size, 768.

    .venv/bin/python scripts/bench_prepare.py [--n 200]
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageOps

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from custom_components.opennvr_workflows.ai import images

MAX_SIDE = images.DEFAULT_IMAGE_SIZE


def camera_jpeg(width: int, height: int, seed: int = 1) -> bytes:
    """A JPEG with detail and noise in it: a flat colour would make decoding look free."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width].astype(np.float32)
    base = np.stack(
        [
            x / width * 255,
            y / height * 255,
            128 + 100 * np.sin(x / 37.0) * np.cos(y / 53.0),
        ],
        -1,
    )
    img = Image.fromarray(np.clip(base, 0, 255).astype(np.uint8))
    draw = ImageDraw.Draw(img)
    for _ in range(400):
        x0, y0 = int(rng.integers(0, width)), int(rng.integers(0, height))
        x1 = x0 + int(rng.integers(4, width // 10))
        y1 = y0 + int(rng.integers(4, height // 10))
        fill = tuple(int(c) for c in rng.integers(0, 255, 3)) if rng.random() < 0.5 else None
        outline = tuple(int(c) for c in rng.integers(0, 255, 3))
        draw.rectangle((x0, y0, x1, y1), fill=fill, outline=outline, width=2)
        draw.text((x0, y0), "AB 123 CD", fill=(255, 255, 255))
    img = img.filter(ImageFilter.GaussianBlur(0.8))
    noisy = np.asarray(img).astype(np.float32) + rng.normal(0, 3, (height, width, 3))
    out = io.BytesIO()
    Image.fromarray(np.clip(noisy, 0, 255).astype(np.uint8)).save(out, "JPEG", quality=85)
    return out.getvalue()


def old_prepare(data: bytes, max_side: int = MAX_SIDE) -> bytes:
    """The Pillow path as it was before libjpeg-turbo's scaling (bicubic resize)."""
    with Image.open(io.BytesIO(data)) as img:
        if img.format == "JPEG":
            fit = min(1.0, max_side / max(img.width, img.height))
            img.draft("RGB", (max(1, int(img.width * fit)), max(1, int(img.height * fit))))
        rgb = ImageOps.exif_transpose(img).convert("RGB")
    scale = max_side / max(rgb.width, rgb.height)
    if scale < 1:
        size = (max(1, round(rgb.width * scale)), max(1, round(rgb.height * scale)))
        rgb = rgb.resize(size, Image.Resampling.BICUBIC)
    out = io.BytesIO()
    rgb.save(out, format="JPEG", quality=images.JPEG_QUALITY)
    return out.getvalue()


def without_turbo(data: bytes, max_side: int = MAX_SIDE) -> bytes:
    real = images._turbo
    images._turbo = lambda: None
    try:
        return images.prepare_image(data, max_side)
    finally:
        images._turbo = real


def size_of(data: bytes) -> tuple[int, int]:
    with Image.open(io.BytesIO(data)) as img:
        return img.size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200, help="prepares per way and picture")
    args = parser.parse_args()
    if images._turbo() is None:
        sys.exit("libturbojpeg is not available here: the new path would be the fallback")
    ways: dict[str, Callable[[bytes], bytes]] = {
        "old": old_prepare,
        "new": images.prepare_image,
        "fallback": without_turbo,
    }
    print(f"prepare to a {MAX_SIDE}-pixel long side, {args.n} prepares each, interleaved")
    print(f"{'picture':>22} {'way':>9} {'median ms':>10} {'p99 ms':>8} {'load 1m':>8}  output")
    for width, height in ((1920, 1080), (3840, 2160)):
        data = camera_jpeg(width, height)
        times: dict[str, list[float]] = {name: [] for name in ways}
        for way in ways.values():  # warm up: the library's loading is not a prepare
            way(data)
        for _ in range(args.n):
            for name, way in ways.items():
                start = time.perf_counter()
                way(data)
                times[name].append((time.perf_counter() - start) * 1000)
        load = os.getloadavg()[0]
        label = f"{width}x{height} {len(data) // 1000} KB"
        for name, way in ways.items():
            ms = sorted(times[name])
            p99 = ms[min(len(ms) - 1, round(0.99 * len(ms)) - 1)]
            out = way(data)
            w, h = size_of(out)
            print(
                f"{label:>22} {name:>9} {statistics.median(ms):>10.2f} {p99:>8.2f} "
                f"{load:>8.2f}  {w}x{h}, {len(out) // 1000} KB"
            )


if __name__ == "__main__":
    main()
