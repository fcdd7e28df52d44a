"""Picture preparation's fast path: libjpeg-turbo scales a camera JPEG inside its decoder,
and everything it cannot take (a rotation, another format, no library) goes through Pillow.
"""

from __future__ import annotations

import io
import sys
import threading
from collections.abc import Iterator

import numpy as np
import pytest
from PIL import Image

from custom_components.opennvr_workflows.ai import ImageError, images, prepare_image
from tests.ai.fake_nvr import jpeg

REAL_RESIZE = Image.Image.resize
RED = (220, 30, 30)
BLUE = (30, 30, 220)


class SpyTurbo:
    """The real TurboJPEG, recording the scaling factor of every scale it is asked for."""

    def __init__(self, real: images._TurboJPEG) -> None:
        self.real = real
        self.factors: list[tuple[int, int] | None] = []

    @property
    def scaling_factors(self) -> frozenset[tuple[int, int]]:
        return self.real.scaling_factors

    def scale_with_quality(
        self, jpeg_buf: bytes, scaling_factor: tuple[int, int] | None = None, quality: int = 85
    ) -> bytes:
        self.factors.append(scaling_factor)
        return self.real.scale_with_quality(
            jpeg_buf, scaling_factor=scaling_factor, quality=quality
        )


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> SpyTurbo:
    real = images._turbo()
    assert real is not None, "libturbojpeg and PyTurboJPEG are part of the dev environment"
    spy = SpyTurbo(real)
    monkeypatch.setattr(images, "_turbo", lambda: spy)
    return spy


@pytest.fixture
def no_resize(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fast path never resamples: any Pillow resize fails the test."""

    def resize(*args: object, **kwargs: object) -> Image.Image:
        raise AssertionError("resized by Pillow")

    monkeypatch.setattr(Image.Image, "resize", resize)


def decoded(data: bytes) -> Image.Image:
    with Image.open(io.BytesIO(data)) as img:
        assert img.format == "JPEG"
        return img.convert("RGB")


def detailed_jpeg(size: tuple[int, int], **save: object) -> bytes:
    """Gradients and a pattern: a mix-up of rows, planes or strides shows in the result."""
    width, height = size
    y, x = np.mgrid[0:height, 0:width].astype(np.float32)
    rgb = np.stack(
        [x / width * 255, y / height * 255, 128 + 100 * np.sin(x / 23.0) * np.cos(y / 31.0)],
        -1,
    )
    out = io.BytesIO()
    Image.fromarray(rgb.clip(0, 255).astype(np.uint8)).save(out, "JPEG", quality=95, **save)
    return out.getvalue()


def halves_jpeg(size: tuple[int, int], orientation: int | None = None) -> bytes:
    """Red on the left half, blue on the right, with an EXIF orientation if given."""
    img = Image.new("RGB", size, BLUE)
    img.paste(RED, (0, 0, size[0] // 2, size[1]))
    exif = Image.Exif()
    if orientation is not None:
        exif[0x0112] = orientation
    out = io.BytesIO()
    img.save(out, format="JPEG", quality=95, exif=exif)
    return out.getvalue()


def close_to(pixel: tuple[int, ...], colour: tuple[int, int, int]) -> bool:
    return all(abs(p - c) <= 12 for p, c in zip(pixel, colour, strict=True))


def largest_fitting_factor(
    long_side: int, max_side: int, factors: frozenset[tuple[int, int]]
) -> tuple[int, int]:
    """Worked out here apart from the code: every factor's scaled size, the largest that fits."""
    sizes = {f: -(-long_side * f[0] // f[1]) for f in factors if f[0] <= f[1]}
    return max((f for f, side in sizes.items() if side <= max_side), key=lambda f: sizes[f])


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ((1920, 1080), (720, 405)),  # 3/8
        ((1080, 1920), (405, 720)),
        ((2560, 1440), (640, 360)),  # 1/4
        ((1280, 720), (640, 360)),  # 5/8 would be 800: 1/2
        ((1001, 777), (751, 583)),  # 3/4, rounded up as libjpeg-turbo rounds
    ],
)
@pytest.mark.usefixtures("no_resize")
def test_a_camera_jpeg_is_scaled_by_the_decoder_by_the_largest_factor_that_fits(
    spy: SpyTurbo, source: tuple[int, int], expected: tuple[int, int]
) -> None:
    data = detailed_jpeg(source)
    out = decoded(prepare_image(data, 768))
    assert out.size == expected
    assert max(out.size) <= 768
    assert spy.factors == [largest_fitting_factor(max(source), 768, spy.scaling_factors)]
    # The shape is kept within a pixel.
    assert abs(out.width * source[1] / source[0] - out.height) <= 1
    # And it is the picture: close to a careful resize of the full-size decode.
    reference = REAL_RESIZE(decoded(data), out.size, Image.Resampling.LANCZOS)
    error = np.abs(np.asarray(out, np.int16) - np.asarray(reference, np.int16)).mean()
    assert error < 4


def test_a_4k_jpeg_is_not_shrunk_below_three_quarters_of_the_working_size(
    spy: SpyTurbo,
) -> None:
    """3840x2160: 1/4 would be 960 wide, over 768, and 1/8 only 480, under three quarters
    of it: Pillow's path resizes it to exactly the working size instead."""
    assert decoded(prepare_image(detailed_jpeg((3840, 2160)), 768)).size == (768, 432)
    assert spy.factors == []


@pytest.mark.usefixtures("no_resize")
def test_a_picture_that_fits_is_re_encoded_at_its_size_never_enlarged(spy: SpyTurbo) -> None:
    assert decoded(prepare_image(detailed_jpeg((320, 240)), 768)).size == (320, 240)
    assert decoded(prepare_image(detailed_jpeg((768, 432)), 768)).size == (768, 432)
    assert spy.factors == [(1, 1), (1, 1)]


@pytest.mark.usefixtures("no_resize")
def test_zero_padding_after_the_end_marker_keeps_the_fast_path(spy: SpyTurbo) -> None:
    assert decoded(prepare_image(detailed_jpeg((1920, 1080)) + bytes(512))).size == (720, 405)
    assert spy.factors == [(3, 8)]


def test_an_exif_rotated_jpeg_goes_through_pillow_and_comes_out_rotated(
    spy: SpyTurbo,
) -> None:
    # 6: turn 90° clockwise to display, so the stored left half (red) ends on top.
    out = decoded(prepare_image(halves_jpeg((1920, 1080), orientation=6), 768))
    assert out.size == (432, 768)
    assert close_to(out.getpixel((216, 100)), RED)  # type: ignore[arg-type]
    assert close_to(out.getpixel((216, 668)), BLUE)  # type: ignore[arg-type]
    assert spy.factors == []


def test_an_upright_exif_orientation_keeps_the_fast_path(spy: SpyTurbo) -> None:
    out = decoded(prepare_image(halves_jpeg((1920, 1080), orientation=1), 768))
    assert out.size == (720, 405)
    assert close_to(out.getpixel((100, 200)), RED)  # type: ignore[arg-type]
    assert close_to(out.getpixel((620, 200)), BLUE)  # type: ignore[arg-type]
    assert spy.factors == [(3, 8)]


def test_a_png_goes_through_pillow(spy: SpyTurbo) -> None:
    out = decoded(prepare_image(jpeg((1920, 1080), colour=(200, 100, 50), fmt="PNG"), 768))
    assert out.size == (768, 432)
    assert close_to(out.getpixel((384, 216)), (200, 100, 50))  # type: ignore[arg-type]
    assert spy.factors == []


def test_a_grey_jpeg_goes_through_pillow_and_comes_out_in_colour(spy: SpyTurbo) -> None:
    out = io.BytesIO()
    Image.new("L", (1920, 1080), 128).save(out, format="JPEG")
    with Image.open(io.BytesIO(prepare_image(out.getvalue(), 768))) as img:
        assert (img.mode, img.size) == ("RGB", (768, 432))
    assert spy.factors == []


def test_a_jpeg_too_big_for_the_decoders_eighth_is_resized_by_pillow(spy: SpyTurbo) -> None:
    # 8000 / 8 = 1000, still above 256.
    assert decoded(prepare_image(jpeg((8000, 1000)), 256)).size == (256, 32)
    assert spy.factors == []


def test_a_jpeg_whose_header_claims_too_many_pixels_is_refused_before_decoding(
    spy: SpyTurbo,
) -> None:
    data = bytearray(jpeg((16, 16)))
    sof = data.index(b"\xff\xc0")  # baseline frame header: length, precision, height, width
    data[sof + 5 : sof + 9] = (6000).to_bytes(2, "big") + (10000).to_bytes(2, "big")
    # Over this module's limit, under Pillow's own (which would refuse it by itself).
    assert Image.MAX_IMAGE_PIXELS is not None
    assert images.MAX_SOURCE_PIXELS < 6000 * 10000 < Image.MAX_IMAGE_PIXELS
    with pytest.raises(ImageError, match="too large"):
        prepare_image(bytes(data))
    assert spy.factors == []


def test_a_truncated_jpeg_is_an_image_error_not_a_grey_filled_picture(spy: SpyTurbo) -> None:
    data = detailed_jpeg((1920, 1080))
    with pytest.raises(ImageError):
        prepare_image(data[: len(data) // 2])
    assert spy.factors == []


def test_when_libjpeg_turbo_fails_on_a_picture_pillow_takes_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Broken(SpyTurbo):
        def scale_with_quality(
            self,
            jpeg_buf: bytes,
            scaling_factor: tuple[int, int] | None = None,
            quality: int = 85,
        ) -> bytes:
            raise OSError("Unsupported color conversion request")

    real = images._turbo()
    assert real is not None
    monkeypatch.setattr(images, "_turbo", lambda: Broken(real))
    out = decoded(prepare_image(halves_jpeg((1920, 1080)), 768))
    assert out.size == (768, 432)
    assert close_to(out.getpixel((100, 216)), RED)  # type: ignore[arg-type]
    assert close_to(out.getpixel((668, 216)), BLUE)  # type: ignore[arg-type]


@pytest.fixture
def fresh_loader() -> Iterator[None]:
    """The loader's cached TurboJPEG is forgotten for the test, and again after it."""
    images._load_turbo.cache_clear()
    yield
    images._load_turbo.cache_clear()


@pytest.mark.usefixtures("fresh_loader")
def test_without_libjpeg_turbo_the_pillow_path_gives_the_picture(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setitem(sys.modules, "turbojpeg", None)  # its import now fails
    assert images._turbo() is None
    first = prepare_image(halves_jpeg((1920, 1080)), 768)
    second = prepare_image(halves_jpeg((1080, 1920), orientation=6), 768)
    out = decoded(first)
    assert out.size == (768, 432)
    assert close_to(out.getpixel((100, 216)), RED)  # type: ignore[arg-type]
    assert close_to(out.getpixel((668, 216)), BLUE)  # type: ignore[arg-type]
    assert decoded(second).size == (768, 432)
    # Said once, not on every picture.
    assert sum("libturbojpeg" in r.getMessage() for r in caplog.records) == 1


@pytest.mark.usefixtures("fresh_loader")
def test_threads_asking_at_once_share_one_turbojpeg() -> None:
    start = threading.Barrier(8)
    got: list[object] = []

    def ask() -> None:
        start.wait()
        got.append(images._turbo())

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(got) == 8
    assert got[0] is not None
    assert all(turbo is got[0] for turbo in got)
