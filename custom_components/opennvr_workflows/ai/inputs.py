"""Look's input: the camera picture now, a few frames over a few seconds, or text.

Pictures come through the NVR read port and are prepared once (downscaled, JPEG). Each
fetch is a trace row, so a run shows which picture the model saw and a failed fetch is
visible as the reason a decision had no evidence. The fetches run inside the step's
seconds: a snapshot that hangs is cut off at the step's deadline (a ``timeout`` row), and
the step then ends without asking the model.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any, cast

from opennvr_app_sdk.agent import TraceRow

from .context import DEFAULT_FRAMES, AIStepContext
from .images import ImageError, prepare_image_off_loop
from .ports import NvrReadError

MAX_FRAMES = 8


@dataclass
class LookInput:
    """What a Look call is shown: prepared JPEGs, text for the data block, and the trace
    rows of the fetches. ``wanted`` is how many pictures the step asked for."""

    images: list[bytes] = field(default_factory=list)
    text: str | None = None
    rows: list[TraceRow] = field(default_factory=list)
    wanted: int = 0
    #: The step's deadline came before every picture was fetched.
    timed_out: bool = False


async def gather_pictures(
    ctx: AIStepContext, camera: str | None, count: int, *, deadline: float | None = None
) -> LookInput:
    """``count`` pictures from ``camera``, ``ctx.frame_interval_s`` apart, before
    ``deadline`` (on ``ctx.clock``; None: no deadline). Never raises."""
    out = LookInput(wanted=count)
    name = "frames" if count > 1 else "picture"
    for i in range(count):
        if i:
            await ctx.sleep(ctx.frame_interval_s)
        started, t0 = time.time(), ctx.clock()
        left = None if deadline is None else max(deadline - t0, 0.0)
        timer = asyncio.timeout(left)
        try:
            if camera is None:
                raise NvrReadError("the step has no camera: the trigger named none")
            async with timer:
                raw = await ctx.nvr.snapshot(camera)
            jpeg = await prepare_image_off_loop(raw, ctx.image_size)
        except TimeoutError as err:
            if not timer.expired():  # the port's own timeout, not the step's
                out.rows.append(_row(name, camera, i, "failed", repr(err), started, ctx, t0))
                continue
            result = "no picture within the step's time"
            out.rows.append(_row(name, camera, i, "timeout", result, started, ctx, t0))
            out.timed_out = True
            break
        except (NvrReadError, ImageError) as err:
            out.rows.append(_row(name, camera, i, "failed", str(err), started, ctx, t0))
            continue
        out.images.append(jpeg)
        out.rows.append(_row(name, camera, i, "ok", f"{len(jpeg)} bytes JPEG", started, ctx, t0))
    return out


def frame_count(frames: int | None) -> int:
    return max(2, min(frames or DEFAULT_FRAMES, MAX_FRAMES))


def _row(
    name: str,
    camera: str | None,
    index: int,
    status: str,
    result: str,
    started: float,
    ctx: AIStepContext,
    t0: float,
) -> TraceRow:
    return TraceRow(
        kind="tool",
        name=name,
        status=cast(Any, status),  # ok / failed, or timeout: beyond the SDK's four
        started_at=started,
        ms=int((ctx.clock() - t0) * 1000),
        args_asked={"camera": camera, "frame": index},
        result=result,
        mode="auto",
    )
