"""What an AI step reads: a Look's input and an Investigate's goal, instructions and tools.

The tools are read and ask tools only, at most five, no repeats: an AI step informs and never
moves things, and fewer tools make small models choose better. Against a site, each tool must
also be one this host implements: a missing tool is refused at import with its name, never
found out at run time. Instructions never receive placeholders, because a value such as
``{plate}`` could carry text that tries to instruct the model; values reach it as data,
through the goal.
"""

from __future__ import annotations

import difflib

from ..model import InvestigateSpec, LookSpec
from ..paths import PathPart
from ..vocabulary import (
    ACTUATOR_TOOL_NAMES,
    AI_TOOL_NAMES,
    INVESTIGATE_MODEL_SKILL,
    MAX_TOOLS,
    TOOL_SKILLS,
)
from .context import CheckContext
from .placeholders import check_text, placeholders_in
from .scope import Scope

__all__ = ["check_investigate", "check_look"]


def check_look(ctx: CheckContext, spec: LookSpec, scope: Scope, body: tuple[PathPart, ...]) -> None:
    """Check a Look: its input fits its mode, a picture has a camera, and the model it needs."""
    check_text(ctx, spec.prompt, scope, (*body, "prompt"))
    if spec.input in ("picture", "frames"):
        ctx.need("vision_model", (*body, "input"))
        if spec.camera is not None:
            ctx.camera_role(spec.camera, (*body, "camera"))
        elif not scope.camera:
            ctx.report(
                "WF-NO-CURRENT-CAMERA",
                f"a Look at a {spec.input} needs a camera, and there is no current camera on "
                "this path; add `camera: <role>`",
                body,
            )
    else:
        ctx.need("language_model", (*body, "input"))
    if spec.input == "text" and spec.text is None:
        ctx.report(
            "WF-AI-INPUT",
            'a Look with `input: text` needs `text:`, e.g. `text: "{message}"`',
            body,
        )
    if spec.input != "text" and spec.text is not None:
        ctx.report(
            "WF-AI-INPUT",
            f"`text` is only read with `input: text`; this step looks at a {spec.input}",
            (*body, "text"),
            key=True,
        )
    if spec.input != "frames" and spec.frames is not None:
        ctx.report(
            "WF-AI-INPUT",
            f"`frames` is only read with `input: frames`; this step looks at {spec.input}",
            (*body, "frames"),
            key=True,
        )
    if spec.input == "text" and spec.camera is not None:
        ctx.report(
            "WF-AI-INPUT",
            "`camera` is only read when the input is a picture or frames",
            (*body, "camera"),
            key=True,
        )
    check_text(ctx, spec.text, scope, (*body, "text"))


def check_investigate(
    ctx: CheckContext, spec: InvestigateSpec, scope: Scope, body: tuple[PathPart, ...]
) -> None:
    """Check an Investigate: its goal, placeholder-free instructions, and its tools."""
    ctx.need("language_model", (*body, "mode"))
    _check_gate(ctx, body)
    check_text(ctx, spec.goal, scope, (*body, "goal"))
    if spec.instructions is not None and placeholders_in(spec.instructions)[0]:
        ctx.report(
            "WF-AI-PLACEHOLDER-IN-INSTRUCTIONS",
            "instructions never receive placeholders (values such as {plate} could carry "
            "text that tries to instruct the model); mention the value in the goal, where it "
            "is passed as data",
            (*body, "instructions"),
        )
    seen: set[str] = set()
    for i, tool in enumerate(spec.tools):
        where = (*body, "tools", i)
        if tool in seen:
            ctx.report("WF-AI-TOOLS-DUPLICATE", f"{tool} is listed twice; list it once", where)
        seen.add(tool)
        if tool in ACTUATOR_TOOL_NAMES:
            ctx.report(
                "WF-AI-TOOL-ACTUATOR",
                f"{tool} moves things, and an AI step only reads and asks; put the action "
                "on a path after an ask_person instead",
                where,
            )
        elif tool not in AI_TOOL_NAMES:
            close = difflib.get_close_matches(tool, sorted(AI_TOOL_NAMES), n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            ctx.report(
                "WF-AI-TOOL-UNKNOWN",
                f"{tool} is not a read or ask tool{hint}; the tools are: "
                + ", ".join(sorted(AI_TOOL_NAMES)),
                where,
            )
        else:
            _check_here(ctx, tool, where)
            if tool in TOOL_SKILLS:
                ctx.need(TOOL_SKILLS[tool], where)
    if len(spec.tools) > MAX_TOOLS:
        ctx.report(
            "WF-AI-TOOLS-TOO-MANY",
            f"an AI step may list at most {MAX_TOOLS} tools (it lists {len(spec.tools)}); "
            "fewer tools make small models choose better",
            (*body, "tools"),
        )


def _check_gate(ctx: CheckContext, body: tuple[PathPart, ...]) -> None:
    """Against a site that knows its skills, an Investigate step needs a model that passed
    the evaluation gate (the skill the gate grants; it is not written in ``needs``)."""
    have = ctx.site.skills
    if have is None or INVESTIGATE_MODEL_SKILL in have:
        return
    ctx.report(
        "WF-SKILL-MISSING",
        f"an Investigate step needs the skill {INVESTIGATE_MODEL_SKILL!r}: a model that passed "
        "the evaluation (the look cases' 95 % Wilson lower bound at 0.80 or above). Measure "
        "the model on the integration's options (the Ollama page), or use a Look step",
        (*body, "mode"),
    )


def _check_here(ctx: CheckContext, tool: str, where: tuple[PathPart, ...]) -> None:
    """Refuse a tool of the contract that this host does not implement, by its name."""
    here = ctx.site.tools
    if here is None or tool in here:
        return
    usable = ", ".join(sorted(here & AI_TOOL_NAMES)) or "none"
    ctx.report(
        "WF-TOOL-NOT-HERE",
        f"{tool} is a tool of the contract, but this site cannot run it; remove it from "
        f"`tools`, or use one this site has ({usable})",
        where,
    )
