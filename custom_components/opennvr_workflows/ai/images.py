"""Pictures for the vision model: decoded, downscaled once, JPEG-encoded.

A 4K snapshot costs a small vision model seconds of prefill for detail it cannot use, and
every extra resample blurs it further. So a picture is decoded once (with JPEG draft mode,
which lets the decoder itself scale down by a power of two), resized once to fit the
model's working size on its long side, and encoded as JPEG. A picture already small enough
is only re-encoded, never enlarged.
"""

from __future__ import annotations

import asyncio
import io

from PIL import Image, ImageOps, UnidentifiedImageError

#: The long side a picture is scaled to. Most small vision models work at 336 to 896
#: pixels; 768 keeps a plate or a face readable without paying for pixels they drop.
DEFAULT_IMAGE_SIZE = 768
JPEG_QUALITY = 85
#: Refuse to decode anything bigger: a camera never sends it, a decompression bomb might.
MAX_SOURCE_PIXELS = 50_000_000


class ImageError(ValueError):
    """The bytes are not a picture this step can use."""


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
        # Bicubic: after the decoder's own scaling the step left is small (1080p: 960 to
        # 768), where Lanczos costs twice as much (8 against 6 ms a frame here) for no
        # detail a small vision model can see.
        rgb = rgb.resize(size, Image.Resampling.BICUBIC)
    out = io.BytesIO()
    rgb.save(out, format="JPEG", quality=JPEG_QUALITY)
    return out.getvalue()


async def prepare_image_off_loop(data: bytes, max_side: int = DEFAULT_IMAGE_SIZE) -> bytes:
    """:func:`prepare_image` in a worker thread: decoding and resizing a camera frame takes
    milliseconds of CPU (Pillow releases the GIL meanwhile), which must not stall the event
    loop the rest of the host runs on."""
    return await asyncio.to_thread(prepare_image, data, max_side)
