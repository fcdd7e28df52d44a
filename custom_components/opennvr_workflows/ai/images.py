"""Pictures for the vision model: decoded, downscaled once, JPEG-encoded.

A 4K snapshot costs a small vision model seconds of prefill for detail it cannot use, and
every extra resample blurs it further. So a picture is scaled down once, to fit the model's
working size on its long side, and encoded as JPEG. A picture already small enough is only
re-encoded, never enlarged.

A camera's JPEG takes the fast path: libjpeg-turbo (through PyTurboJPEG, which Home
Assistant's camera component ships) scales it inside the decoder, by the largest of its
DCT scaling factors (M/8) that fits the working size, and encodes the result straight from
the decoder's YCbCr planes: no resample and no colour conversion. The model gets the
decoder's own size (1920x1080 at 3/8 is 720x405 for a 768 working size), not exactly the
working size: the resize to exactly 768 cost more than all the rest. Where the largest factor
that fits leaves less than three quarters of the working size (3840x2160: 1/8 is 480 wide),
Pillow's path resizes to the working size instead. Measured with scripts/bench_prepare.py
(a 1080p camera-like JPEG of 357 KB, on a 2-core machine): 6.5 ms median, 7.8 p99, against
16.4 / 20.0 for the previous Pillow path (draft mode, then a bicubic resize of about 7 ms);
what is left is mostly the entropy decoding every decoder pays. Anything else takes
Pillow's path: another format, a JPEG whose EXIF orientation asks for a rotation, a grey or
CMYK JPEG, a cut-short JPEG, a picture too large for the decoder's 1/8 to fit, and a host
without libturbojpeg.
"""

from __future__ import annotations

import asyncio
import functools
import io
import logging
import threading
from typing import Protocol, cast

from PIL import Image, ImageOps, UnidentifiedImageError

_LOGGER = logging.getLogger(__name__)

#: The long side a picture is scaled to. Most small vision models work at 336 to 896
#: pixels; 768 keeps a plate or a face readable without paying for pixels they drop.
DEFAULT_IMAGE_SIZE = 768
JPEG_QUALITY = 85
#: Refuse to decode anything bigger: a camera never sends it, a decompression bomb might.
MAX_SOURCE_PIXELS = 50_000_000

_EXIF_ORIENTATION = 0x0112
_JPEG_END = b"\xff\xd9"


class ImageError(ValueError):
    """The bytes are not a picture this step can use."""


class _TurboJPEG(Protocol):
    """What this module uses of PyTurboJPEG's ``TurboJPEG`` (the package ships no types)."""

    @property
    def scaling_factors(self) -> frozenset[tuple[int, int]]: ...

    def scale_with_quality(
        self, jpeg_buf: bytes, scaling_factor: tuple[int, int] | None = ..., quality: int = ...
    ) -> bytes: ...


_TURBO_LOCK = threading.Lock()


@functools.cache
def _load_turbo() -> _TurboJPEG | None:
    try:
        from turbojpeg import TurboJPEG  # type: ignore[import-untyped]

        return cast(_TurboJPEG, TurboJPEG())
    except Exception as err:  # ImportError, OSError (the library), RuntimeError (not found)
        _LOGGER.warning(
            "libturbojpeg is not available (%s): pictures are scaled by Pillow, slower", err
        )
        return None


def _turbo() -> _TurboJPEG | None:
    """The one TurboJPEG of this process, or None without the library. Loading it reads a
    shared library from disk, so it happens on first use, in the worker thread that prepares
    a picture; the lock keeps two threads from loading (and warning) twice."""
    with _TURBO_LOCK:
        return _load_turbo()


#: The least share of the working size the decoder's own scaling may give: below it
#: (3840x2160, whose 1/8 is 480 wide and 1/4 960) Pillow's path resizes to the working size
#: exactly, as a plate or a face three quarters as wide is still readable, half as wide not.
MIN_SHARE = 0.75


def _scaling_factor(
    width: int, height: int, max_side: int, factors: frozenset[tuple[int, int]]
) -> tuple[int, int] | None:
    """The largest of the decoder's factors (never above 1) whose scaled long side, rounded
    up as libjpeg-turbo rounds it, is at most ``max_side``; None if even the smallest is too
    big, or if the one that fits leaves less than :data:`MIN_SHARE` of ``max_side`` (of the
    picture's own long side, for one that fits already)."""
    long_side = max(width, height)
    fitting = [
        (num, denom)
        for num, denom in factors
        if num <= denom and -(-long_side * num // denom) <= max_side
    ]
    best = max(fitting, key=lambda f: f[0] / f[1], default=None)
    if best is None:
        return None
    scaled = -(-long_side * best[0] // best[1])
    return best if scaled >= MIN_SHARE * min(max_side, long_side) else None


def _scaled_by_decoder(img: Image.Image, data: bytes, max_side: int) -> bytes | None:
    """``data`` scaled by libjpeg-turbo's decoder and re-encoded, or None where the fast path
    does not apply (the caller then takes Pillow's). ``img`` is ``data`` opened by Pillow,
    its header read and nothing decoded."""
    if img.format != "JPEG" or img.mode != "RGB":
        return None  # not a JPEG, or a grey / CMYK one: Pillow converts it to RGB
    if not data.rstrip(b"\x00").endswith(_JPEG_END):
        # Cut short: libjpeg-turbo would only warn and fill the rest with grey, while
        # Pillow refuses a truncated file.
        return None
    if img.getexif().get(_EXIF_ORIENTATION, 1) != 1:
        return None  # Pillow rotates it
    turbo = _turbo()
    if turbo is None:
        return None
    factor = _scaling_factor(img.width, img.height, max_side, turbo.scaling_factors)
    if factor is None:
        return None
    try:
        return turbo.scale_with_quality(data, scaling_factor=factor, quality=JPEG_QUALITY)
    except Exception as err:  # whatever libjpeg-turbo refuses, Pillow decides on
        _LOGGER.debug("libjpeg-turbo could not scale the picture (%s), using Pillow", err)
        return None


def prepare_image(data: bytes, max_side: int = DEFAULT_IMAGE_SIZE) -> bytes:
    """``data`` (JPEG, PNG, WebP, ...) as a JPEG whose long side is at most ``max_side``."""
    if max_side < 16:
        raise ValueError("max_side must be at least 16 pixels")
    if not data:
        raise ImageError("no picture: the camera returned no data")
    try:
        with Image.open(io.BytesIO(data)) as img:
            if img.width * img.height > MAX_SOURCE_PIXELS:
                raise ImageError(f"picture too large to decode ({img.width}x{img.height})")
            scaled = _scaled_by_decoder(img, data, max_side)
            if scaled is not None:
                return scaled
            if img.format == "JPEG":
                # Lets libjpeg decode at 1/2, 1/4 or 1/8 scale, still >= the target size.
                # The request keeps the picture's shape: asking for a square would keep a
                # 16:9 frame's short side above the target and the decoder at full size.
                fit = min(1.0, max_side / max(img.width, img.height))
                img.draft("RGB", (max(1, int(img.width * fit)), max(1, int(img.height * fit))))
            oriented = ImageOps.exif_transpose(img)
            rgb = oriented.convert("RGB")
    except ImageError:
        raise
    except (UnidentifiedImageError, OSError, Image.DecompressionBombError) as err:
        raise ImageError(f"not a picture: {err}") from err
    scale = max_side / max(rgb.width, rgb.height)
    if scale < 1:
        size = (max(1, round(rgb.width * scale)), max(1, round(rgb.height * scale)))
        # Bilinear: after the decoder's own scaling the step left is small (1080p: 960 to
        # 768). Measured on a 1080p frame (scripts/bench_prepare.py's picture): bilinear
        # 5.5 ms, bicubic 7.1, Lanczos 9.2; against a Lanczos resize of the full-size
        # decode, PSNR 36.8 / 38.5 / 38.2 dB, and 27.7 / 28.0 / 28.1 dB once encoded at
        # quality 85: the encoding's loss swamps the filter's, so the cheapest good one.
        rgb = rgb.resize(size, Image.Resampling.BILINEAR)
    out = io.BytesIO()
    rgb.save(out, format="JPEG", quality=JPEG_QUALITY)
    return out.getvalue()


async def prepare_image_off_loop(data: bytes, max_side: int = DEFAULT_IMAGE_SIZE) -> bytes:
    """:func:`prepare_image` in a worker thread: decoding and resizing a camera frame takes
    milliseconds of CPU (Pillow and libjpeg-turbo release the GIL meanwhile), which must not
    stall the event loop the rest of the host runs on."""
    return await asyncio.to_thread(prepare_image, data, max_side)
