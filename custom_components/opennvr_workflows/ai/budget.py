"""Every model call an AI step makes is drawn from the workflow's AI budget first.

The engine owns the budget (RFC section 2: 60 AI calls an hour by default) and passes it in;
this module only draws. :class:`BudgetedClient` wraps any ``LLMClient`` so that the SDK's
loop, the tool handlers that ask the vision model, and the agreement draws all pay the same
way, and a refused draw is an ``LLMError`` the SDK already turns into "unsure" without
crashing the run. The executor then reports it as ``over_budget`` rather than ``llm_down``,
because the model was never asked.

:class:`FixedBudget` and :class:`UnlimitedBudget` are small implementations for the command
line, the evals and tests; the engine brings its own hourly one.
"""

from __future__ import annotations

from typing import Any

from opennvr_app_sdk.agent import ChatResult, LLMClient, LLMError

from .ports import AIBudget


class BudgetSpentError(LLMError):
    """The workflow's AI budget could not afford this model call."""


class UnlimitedBudget:
    """A budget that always pays: for one-off runs a person started by hand."""

    def try_draw(self, calls: int = 1) -> bool:
        return True


class FixedBudget:
    """A budget of ``calls`` model calls in all; counts what was drawn and refused."""

    def __init__(self, calls: int) -> None:
        if calls < 0:
            raise ValueError("a budget cannot be negative")
        self.remaining = calls
        self.drawn = 0
        self.refused = 0

    def try_draw(self, calls: int = 1) -> bool:
        if calls > self.remaining:
            self.refused += 1
            return False
        self.remaining -= calls
        self.drawn += calls
        return True


class BudgetedClient:
    """An ``LLMClient`` that draws one call from ``budget`` before each chat.

    ``prepaid`` decision calls (those with a ``format``) were drawn up front: a step
    reserves its agreement draws before it starts, so a budget that runs dry mid-step
    cannot turn a refused draw into a disagreeing vote. ``refused`` counts the calls the
    budget refused, so the executor can tell a spent budget from a model that is down."""

    def __init__(self, inner: LLMClient, budget: AIBudget, *, prepaid: int = 0) -> None:
        self.inner = inner
        self.budget = budget
        self.prepaid = prepaid
        self.refused = 0
        self.calls = 0

    async def chat(
        self,
        *,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        format: dict[str, Any] | None = None,
        temperature: float = 0.2,
        max_tokens: int = 256,
    ) -> ChatResult:
        if format is not None and self.prepaid > 0:
            self.prepaid -= 1
        elif not self.budget.try_draw(1):
            self.refused += 1
            raise BudgetSpentError("the workflow's AI budget is spent; the model was not asked")
        self.calls += 1
        return await self.inner.chat(
            messages=messages,
            tools=tools,
            format=format,
            temperature=temperature,
            max_tokens=max_tokens,
        )
