"""Draw the integration's brand images (``custom_components/opennvr_workflows/brand/``).

Home Assistant (2026.3 and later) serves a custom integration's own ``brand/`` images at
``/api/brands/integration/<domain>/<image>`` before it asks the brands CDN, which no longer
takes custom integrations. The images follow the brands repository's rules: PNG, an icon
square at 256 px (512 px for ``@2x``), a logo whose shortest side is 128 to 256 px
(256 to 512 px for ``@2x``), transparent around the drawing, trimmed. Drawn here rather than
kept only as binaries, so they can be redrawn and reviewed as code:

    .venv/bin/python scripts/brand_images.py
"""

from __future__ import annotations

from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

BRAND = Path(__file__).resolve().parents[1] / "custom_components/opennvr_workflows/brand"
#: Drawn this many times larger, then reduced: smooth edges without anti-aliasing support.
SUPERSAMPLE = 4
BLUE = (18, 92, 160, 255)
WHITE = (255, 255, 255, 255)
DARK = (16, 32, 48, 255)
NAME = "OpenNVR Workflows"


def icon(size: int) -> Image.Image:
    """A camera lens beside three linked workflow steps, on a rounded blue square."""
    big = size * SUPERSAMPLE
    image = Image.new("RGBA", (big, big), (0, 0, 0, 0))
    draw = ImageDraw.Draw(image)
    u = big / 16  # the drawing's grid: 16 units a side
    draw.rounded_rectangle((0, 0, big - 1, big - 1), radius=3 * u, fill=BLUE)
    # The lens: a white ring round a dark pupil with a highlight.
    cx, cy, r = 6 * u, 8 * u, 3.6 * u
    draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=WHITE)
    r2 = 2.4 * u
    draw.ellipse((cx - r2, cy - r2, cx + r2, cy + r2), fill=DARK)
    r3 = 0.7 * u
    hx, hy = cx - 0.8 * u, cy - 0.8 * u
    draw.ellipse((hx - r3, hy - r3, hx + r3, hy + r3), fill=WHITE)
    # The workflow: three steps linked top to bottom, the last one branching from the lens.
    nodes = [(12.5 * u, 4 * u), (12.5 * u, 8 * u), (12.5 * u, 12 * u)]
    width = round(0.6 * u)
    draw.line([(cx + r, cy), nodes[1]], fill=WHITE, width=width)
    draw.line([nodes[0], nodes[2]], fill=WHITE, width=width)
    rn = 1.3 * u
    for x, y in nodes:
        draw.rounded_rectangle((x - rn, y - rn, x + rn, y + rn), radius=0.4 * u, fill=WHITE)
    return image.resize((size, size), Image.Resampling.LANCZOS)


def logo(height: int, text: tuple[int, int, int, int]) -> Image.Image:
    """The icon with the name beside it, trimmed; ``text`` is the name's colour (dark on
    light themes, white on dark ones)."""
    big = height * SUPERSAMPLE
    font = ImageFont.load_default(size=round(big * 0.42))
    measure = ImageDraw.Draw(Image.new("RGBA", (1, 1)))
    left, top, right, bottom = measure.textbbox((0, 0), NAME, font=font)
    gap = big // 5
    canvas = Image.new("RGBA", (big + gap + (right - left), big), (0, 0, 0, 0))
    canvas.alpha_composite(icon(big))
    draw = ImageDraw.Draw(canvas)
    draw.text((big + gap - left, (big - (bottom - top)) / 2 - top), NAME, font=font, fill=text)
    width = round(canvas.width / SUPERSAMPLE)
    small = canvas.resize((width, height), Image.Resampling.LANCZOS)
    return small.crop(small.getchannel("A").getbbox())  # trimmed, as the brand rules ask


def images() -> dict[str, Image.Image]:
    """Every brand image by its file name."""
    return {
        "icon.png": icon(256),
        "icon@2x.png": icon(512),
        "logo.png": logo(128, DARK),
        "logo@2x.png": logo(256, DARK),
        "dark_logo.png": logo(128, WHITE),
        "dark_logo@2x.png": logo(256, WHITE),
    }


def main() -> None:
    BRAND.mkdir(exist_ok=True)
    for name, image in images().items():
        image.save(BRAND / name, optimize=True)
        print(f"{name}: {image.width}x{image.height}")


if __name__ == "__main__":
    main()
