"""Picture preparation: decoded once, downscaled once to the working size, JPEG."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from custom_components.opennvr_workflows.ai import ImageError, images, prepare_image
from tests.ai.fake_nvr import jpeg


def size_of(data: bytes) -> tuple[int, int]:
    with Image.open(io.BytesIO(data)) as img:
        assert img.format == "JPEG"
        return img.size


def test_a_large_picture_fits_the_working_size() -> None:
    # libjpeg-turbo's scaling: the largest M/8 factor that fits, no resample after it; a
    # 4K frame, whose 1/8 would leave 480 pixels, is resized to the working size instead.
    assert size_of(prepare_image(jpeg((3840, 2160)), 768)) == (768, 432)
    assert size_of(prepare_image(jpeg((1080, 1920)), 768)) == (405, 720)


def test_without_libjpeg_turbo_a_large_picture_is_resized_to_the_working_size(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(images, "_turbo", lambda: None)
    assert size_of(prepare_image(jpeg((3840, 2160)), 768)) == (768, 432)
    assert size_of(prepare_image(jpeg((1080, 1920)), 768)) == (432, 768)


def test_a_small_picture_is_never_enlarged() -> None:
    assert size_of(prepare_image(jpeg((320, 240)), 768)) == (320, 240)


def test_png_with_alpha_becomes_a_jpeg() -> None:
    assert size_of(prepare_image(jpeg((1000, 500), fmt="PNG"), 500)) == (500, 250)


def test_exif_orientation_is_applied() -> None:
    out = io.BytesIO()
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90° clockwise to display
    Image.new("RGB", (800, 400)).save(out, format="JPEG", exif=exif)
    assert size_of(prepare_image(out.getvalue(), 800)) == (400, 800)


@pytest.mark.parametrize("data", [b"", b"not a picture", b"\xff\xd8\xff\xe0garbage"])
def test_what_is_not_a_picture_is_an_image_error(data: bytes) -> None:
    with pytest.raises(ImageError):
        prepare_image(data)


def test_the_working_size_must_be_sensible() -> None:
    with pytest.raises(ValueError, match="max_side"):
        prepare_image(jpeg((64, 64)), 8)


@pytest.mark.parametrize(
    ("source", "decoded"), [((1920, 1080), (960, 540)), ((3840, 2160), (960, 540))]
)
def test_the_decoder_scales_a_wide_frame_down_itself(
    monkeypatch: pytest.MonkeyPatch, source: tuple[int, int], decoded: tuple[int, int]
) -> None:
    """Pillow's path (no libjpeg-turbo): JPEG draft mode is asked for the target's shape,
    so libjpeg decodes a 16:9 frame at a reduced scale (the largest that still covers
    768x432) instead of at full size."""
    monkeypatch.setattr(images, "_turbo", lambda: None)
    sizes: list[tuple[int, int]] = []
    real_resize = Image.Image.resize

    def resize(
        self: Image.Image, size: tuple[int, int], *args: object, **kwargs: object
    ) -> Image.Image:
        sizes.append(self.size)
        return real_resize(self, size, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Image.Image, "resize", resize)
    assert size_of(prepare_image(jpeg(source), 768)) == (768, 432)
    assert sizes == [decoded]


async def test_preparing_off_the_loop_gives_the_same_picture() -> None:
    from custom_components.opennvr_workflows.ai.images import prepare_image_off_loop

    frame = jpeg((1920, 1080))
    assert await prepare_image_off_loop(frame, 768) == prepare_image(frame, 768)
