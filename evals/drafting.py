"""The ``draft`` suite: Describe it on each case's sentence, through the product's own code.

Each case's sentence goes through ``ai.draft.draft_workflow`` (the function the
``describe_workflow`` action and the Workflows panel call: the same prompt, schema, repair
loop and Test state) on the model under test, gated by the contract's validator against
the case's site: its camera roles and skills (a case names no host, so the tools are the
contract's), and the evaluation gate passed (Describe it is offered only on a model that
passed it, so an Investigate step is allowed). Rows are scored by
``evaluation.draft_scoring``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from custom_components.opennvr_workflows.ai import OllamaLLMClient, OllamaSettings
from custom_components.opennvr_workflows.ai.draft import DraftSite, draft_workflow
from custom_components.opennvr_workflows.evaluation.case_model import DraftCase
from custom_components.opennvr_workflows.evaluation.draft_scoring import DraftRow, score_draft
from custom_components.opennvr_workflows.evaluation.harness import Settings
from custom_components.opennvr_workflows.evaluation.progress import Progress
from custom_components.opennvr_workflows.workflow import Report, SiteProfile, validate_text
from custom_components.opennvr_workflows.workflow.vocabulary import INVESTIGATE_MODEL_SKILL


def case_site(case: DraftCase) -> tuple[DraftSite, SiteProfile]:
    """What the model is told about the case's site, and what the validator checks."""
    skills = (*case.skills, INVESTIGATE_MODEL_SKILL)
    told = DraftSite(camera_roles=case.camera_roles, skills=skills, facts=case.facts)
    profile = SiteProfile(skills=frozenset(skills), camera_roles=frozenset(case.camera_roles))
    return told, profile


async def run_drafts(
    cases: Sequence[DraftCase], model: str, settings: Settings, progress: Progress
) -> list[DraftRow]:
    """Every draft case on ``model``, scored, in order."""
    llm = OllamaLLMClient(
        OllamaSettings(host=settings.ollama, model=model, timeout_seconds=settings.timeout_s)
    )
    rows: list[DraftRow] = []
    try:
        for case in cases:
            told, profile = case_site(case)

            async def validate(text: str, profile: SiteProfile = profile) -> Report:
                return validate_text(text, site=profile)

            t0 = time.perf_counter()
            result = await draft_workflow(
                case.sentence, llm=llm, model=model, site=told, validate=validate
            )
            row = score_draft(case, result, model=model, seconds=time.perf_counter() - t0)
            rows.append(row)
            progress.advance(f"draft {model} {case.id}: {row.status}")
    finally:
        await llm.aclose()
    return rows
