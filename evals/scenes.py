"""The rendered scenes the starter cases look at, drawn deterministically with Pillow.

No consented camera footage ships with the repository, so the starter Look cases use drawn
scenes: simple, but each one shows what its case file's ``shows`` says (a van lettered
PARCEL EXPRESS, a worker without a helmet) and nothing that contradicts it. They are
committed as small JPEGs in the integration's ``evaluation/cases/pictures``;
``python -m evals.scenes`` draws them again (the bytes may differ between Pillow versions,
which changes the request keys a replay transcript was recorded under: record again after
redrawing).
Real pictures from your own cameras make better cases: add them beside these.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from custom_components.opennvr_workflows.evaluation.case_loader import DEFAULT_CASES

SIZE = (480, 270)
QUALITY = 80
FOLDER = DEFAULT_CASES / "pictures"

type Draw = ImageDraw.ImageDraw
type Colour = tuple[int, int, int]

SKY: Colour = (150, 185, 215)
ROAD: Colour = (105, 105, 110)
GRASS: Colour = (95, 140, 80)
SKIN: Colour = (225, 185, 150)


def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=size)


def _street(d: Draw) -> None:
    d.rectangle((0, 0, SIZE[0], 150), fill=SKY)
    d.rectangle((0, 150, SIZE[0], SIZE[1]), fill=ROAD)
    for x in range(0, SIZE[0], 60):  # the gate's posts
        d.rectangle((x, 120, x + 6, 175), fill=(60, 60, 60))


def _person(
    d: Draw,
    x: int,
    y: int,
    *,
    shirt: Colour = (60, 80, 140),
    helmet: bool = False,
    vest: bool = False,
    holding_box: bool = False,
) -> None:
    """A standing person, feet at ``y``, centred on ``x``."""
    d.rectangle((x - 12, y - 45, x - 3, y), fill=(40, 40, 60))  # legs
    d.rectangle((x + 3, y - 45, x + 12, y), fill=(40, 40, 60))
    d.rectangle((x - 16, y - 95, x + 16, y - 45), fill=shirt)  # torso
    if vest:
        d.rectangle((x - 16, y - 95, x + 16, y - 45), fill=(255, 120, 20))
        d.rectangle((x - 16, y - 75, x + 16, y - 70), fill=(230, 230, 230))
        d.rectangle((x - 16, y - 60, x + 16, y - 55), fill=(230, 230, 230))
    d.ellipse((x - 12, y - 121, x + 12, y - 97), fill=SKIN)  # head
    if helmet:
        d.chord((x - 15, y - 128, x + 15, y - 102), 180, 360, fill=(250, 210, 0))
        d.rectangle((x - 17, y - 116, x + 17, y - 112), fill=(250, 210, 0))
    if holding_box:
        d.rectangle((x - 22, y - 80, x + 22, y - 50), fill=(165, 115, 60), outline=(90, 60, 30))


def _van(d: Draw, x: int) -> None:
    d.rectangle((x, 95, x + 230, 195), fill=(245, 245, 245), outline=(80, 80, 80))
    d.rectangle((x + 230, 125, x + 290, 195), fill=(235, 235, 235), outline=(80, 80, 80))
    d.rectangle((x + 240, 132, x + 280, 160), fill=(120, 160, 200))
    d.text((x + 18, 125), "PARCEL EXPRESS", fill=(200, 30, 30), font=_font(22))
    for cx in (x + 50, x + 240):
        d.ellipse((cx - 22, 175, cx + 22, 219), fill=(30, 30, 30))


def _car(d: Draw, x: int, body: Colour, *, taxi: bool = False) -> None:
    d.rectangle((x, 140, x + 220, 195), fill=body, outline=(50, 50, 50))
    d.polygon([(x + 40, 140), (x + 70, 105), (x + 160, 105), (x + 190, 140)], fill=body)
    glass = (140, 175, 205)
    d.polygon([(x + 52, 138), (x + 76, 112), (x + 112, 112), (x + 112, 138)], fill=glass)
    d.polygon([(x + 120, 138), (x + 120, 112), (x + 154, 112), (x + 178, 138)], fill=glass)
    if taxi:
        d.rectangle((x + 88, 88, x + 142, 105), fill=(30, 30, 30))
        d.text((x + 95, 89), "TAXI", fill=(255, 220, 0), font=_font(15))
        for i in range(0, 220, 20):
            d.rectangle((x + i, 165, x + i + 10, 172), fill=(30, 30, 30))
    for cx in (x + 45, x + 175):
        d.ellipse((cx - 20, 178, cx + 20, 218), fill=(30, 30, 30))


def gate_parcel_van() -> Image.Image:
    img = Image.new("RGB", SIZE)
    d = ImageDraw.Draw(img)
    _street(d)
    _van(d, 20)
    _person(d, 380, 250, shirt=(180, 30, 30), holding_box=True)
    return img


def gate_taxi() -> Image.Image:
    img = Image.new("RGB", SIZE)
    d = ImageDraw.Draw(img)
    _street(d)
    _car(d, 120, (250, 200, 20), taxi=True)
    return img


def gate_visitor_car() -> Image.Image:
    img = Image.new("RGB", SIZE)
    d = ImageDraw.Draw(img)
    _street(d)
    _car(d, 60, (40, 80, 170))
    _person(d, 360, 250, shirt=(90, 150, 90))
    return img


def gate_food_scooter() -> Image.Image:
    img = Image.new("RGB", SIZE)
    d = ImageDraw.Draw(img)
    _street(d)
    d.ellipse((150, 190, 200, 240), fill=(30, 30, 30))
    d.ellipse((290, 190, 340, 240), fill=(30, 30, 30))
    d.polygon([(170, 200), (320, 200), (300, 170), (200, 170)], fill=(200, 40, 40))
    d.rectangle((180, 120, 250, 170), fill=(230, 60, 30), outline=(120, 20, 10))
    d.text((186, 134), "PIZZA", fill=(255, 255, 255), font=_font(18))
    _person(d, 280, 200, shirt=(230, 60, 30), helmet=False)
    return img


def _site(d: Draw) -> None:
    d.rectangle((0, 0, SIZE[0], 120), fill=SKY)
    d.rectangle((0, 120, SIZE[0], SIZE[1]), fill=(150, 130, 100))  # earth
    d.rectangle((20, 60, 200, 160), fill=(190, 180, 170), outline=(90, 90, 90))  # half-built wall
    for i in range(3):
        d.rectangle((260 + i * 55, 150, 300 + i * 55, 175), fill=(170, 80, 60))  # bricks


def _worker(frame: int, *, helmet: bool, vest: bool) -> Image.Image:
    img = Image.new("RGB", SIZE)
    d = ImageDraw.Draw(img)
    _site(d)
    _person(d, 240 + frame * 25, 250, shirt=(70, 90, 120), helmet=helmet, vest=vest)
    return img


def _doorstep(frame: int, *, parcel: bool, courier: bool = False) -> Image.Image:
    img = Image.new("RGB", SIZE)
    d = ImageDraw.Draw(img)
    d.rectangle((0, 0, SIZE[0], SIZE[1]), fill=(200, 190, 170))  # house wall
    d.rectangle((180, 20, 300, 210), fill=(110, 60, 40), outline=(60, 30, 20))  # front door
    d.ellipse((280, 110, 290, 120), fill=(220, 200, 60))
    d.rectangle((140, 210, 340, 240), fill=(150, 150, 150))  # doorstep
    d.rectangle((0, 240, SIZE[0], SIZE[1]), fill=GRASS)
    d.text((205, 60), "12", fill=(230, 210, 120), font=_font(28))
    if parcel:
        d.rectangle((300, 175, 350, 212), fill=(165, 115, 60), outline=(90, 60, 30))
        d.line((300, 193, 350, 193), fill=(220, 200, 150), width=3)
    if courier:
        _person(d, 120 - frame * 4, 262, shirt=(180, 30, 30), holding_box=True)
    return img


def _frames(name: str, draw: Callable[[int], Image.Image]) -> dict[str, Callable[[], Image.Image]]:
    """Three frames of one scene, ``<name>_1`` to ``<name>_3``."""
    return {f"{name}_{i + 1}": partial(draw, i) for i in range(3)}


SCENES: dict[str, Callable[[], Image.Image]] = {
    "gate_parcel_van": gate_parcel_van,
    "gate_taxi": gate_taxi,
    "gate_visitor_car": gate_visitor_car,
    "gate_food_scooter": gate_food_scooter,
    **_frames("gear_ok", partial(_worker, helmet=True, vest=True)),
    **_frames("gear_no_helmet", partial(_worker, helmet=False, vest=True)),
    **_frames("gear_no_vest", partial(_worker, helmet=True, vest=False)),
    **_frames("door_parcel", partial(_doorstep, parcel=True)),
    **_frames("door_empty", partial(_doorstep, parcel=False)),
    "door_courier": partial(_doorstep, 0, parcel=False, courier=True),
}


def render_all(folder: Path = FOLDER) -> list[Path]:
    """Draw every scene into ``folder`` as ``<name>.jpg``; the paths written."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, draw in SCENES.items():
        path = folder / f"{name}.jpg"
        draw().save(path, format="JPEG", quality=QUALITY, optimize=True)
        written.append(path)
    return written


if __name__ == "__main__":
    for p in render_all(Path(sys.argv[1]) if len(sys.argv) > 1 else FOLDER):
        print(p)
