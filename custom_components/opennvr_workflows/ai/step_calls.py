"""Every model call one AI step makes: capped, paid for, and each one on the trace.

The SDK's loop bounds a step by its seconds and its tool calls, not by its model calls: a
model that keeps calling a tool it may not use spends a model call per refusal, each drawn
from the workflow's hourly budget, so one step could spend the hour. Nor does its trace
hold every call: a call the step's deadline cuts off leaves no row, and the calls a tool
makes to describe a picture are not the SDK's to see. So all of a step's calls go through
one :class:`StepCalls`, which adds:

* a cap from the step's limits (:func:`max_model_calls`). Past it a call is refused with
  a :class:`CallLimitError`, which the SDK reads as a failed call and the executor reports
  as ``over_budget``. The agreement draws are outside the cap: they were reserved from the
  budget before the step started, so they are never the calls that break it;
* how each call ended (:class:`CallRecord`): answered, failed, refused (the cap or the
  budget), cut off by the step's deadline (``timeout``) or cancelled for another reason;
* trace rows for the calls the SDK's trace lacks (:attr:`StepCalls.rows`), which the
  executor merges into the decision's trace in time order.

The SDK's loop calls through :attr:`StepCalls.sdk` (it traces those calls itself); the
tool handlers call through :attr:`StepCalls.tools` (traced here).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from opennvr_app_sdk.agent import ChatResult, Limits, LLMClient, LLMError, TraceRow

from .budget import BudgetSpentError

type CallOutcome = Literal["ok", "failed", "refused", "timeout", "cancelled"]
#: ``turn``: the tool phase asking the model what to do next; ``decision``: a decision
#: draw; ``tool``: a call a tool handler makes (a picture description).
type CallPurpose = Literal["turn", "decision", "tool"]

#: A call cancelled this close to the step's deadline was cut off by it: the SDK's timer
#: and the step's clock are read a few microseconds apart.
DEADLINE_SLACK_S = 0.05


class CallLimitError(LLMError):
    """The step made as many model calls as its limits allow; the model was not asked."""


def max_model_calls(limits: Limits, samples: int) -> int:
    """The most model calls one step may make: for each tool call the turn that asks for
    it and one picture description, one turn that ends the tool phase, one turn spent on
    a refused or malformed call, and the agreement draws. A model that loops on refused
    tools reaches it after a few calls, not after the workflow's hourly budget."""
    return 2 * limits.tool_calls + 2 + max(samples, 1)


@dataclass(frozen=True)
class CallRecord:
    """How one model call ended; ``detail`` is the error when it did not answer."""

    purpose: CallPurpose
    outcome: CallOutcome
    detail: str = ""


class StepCalls:
    """The door for one step's model calls; see the module docstring.

    ``inner`` is the budgeted client. ``made`` counts the calls the cap has let through
    (the decision draws excluded), carried over a suspension. ``deadline`` is the step's
    deadline on ``clock``, which tells a call cut off by it from one cancelled otherwise."""

    def __init__(
        self,
        inner: LLMClient,
        *,
        model_name: str,
        max_calls: int,
        samples: int,
        made: int = 0,
        deadline: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.inner = inner
        self.model_name = model_name
        self.max_calls = max_calls
        self.allowance = max(max_calls - max(samples, 1), 0)
        self.made = made
        self.deadline = deadline
        self.clock = clock
        self.records: list[CallRecord] = []
        self.rows: list[TraceRow] = []

    # A view made at each ask, not kept: kept, it and this object would hold each other,
    # and every step's calls, records and client would wait for the garbage collector.
    @property
    def sdk(self) -> LLMClient:
        """The client the SDK's loop calls through (it traces those calls itself)."""
        return _View(self, traced_by_sdk=True)

    @property
    def tools(self) -> LLMClient:
        """The client the tool handlers call through (traced here)."""
        return _View(self, traced_by_sdk=False)

    @property
    def decision_draws(self) -> list[CallRecord]:
        return [r for r in self.records if r.purpose == "decision"]

    def last_failure(self) -> CallRecord | None:
        """The last call that did not answer: why a step that stopped early stopped."""
        return next((r for r in reversed(self.records) if r.outcome != "ok"), None)

    async def chat(self, *, traced_by_sdk: bool, **kwargs: Any) -> ChatResult:
        """One call through the cap and the budget, recorded however it ends."""
        purpose: CallPurpose = (
            "decision"
            if kwargs.get("format") is not None
            else ("turn" if traced_by_sdk else "tool")
        )
        call = _Call(self, purpose, traced_by_sdk)
        if purpose != "decision":
            if self.made >= self.allowance:
                err = CallLimitError(
                    f"the step's limit of {self.max_calls} model calls was reached; "
                    "the model was not asked"
                )
                call.end("refused", str(err))
                raise err
            self.made += 1
        try:
            res = await self.inner.chat(**kwargs)
        except BudgetSpentError as err:
            call.end("refused", str(err))
            raise
        except asyncio.CancelledError:
            if self._past_deadline():
                call.end("timeout", f"cut off by the step's deadline after {call.ms()} ms")
            else:
                call.end("cancelled", f"cancelled after {call.ms()} ms, before any answer")
            raise
        except Exception as err:  # recorded, then the SDK's to judge
            call.end("failed", str(err) or type(err).__name__)
            raise
        call.end("ok", res.content, res)
        return res

    def _past_deadline(self) -> bool:
        return self.deadline is not None and self.clock() >= self.deadline - DEADLINE_SLACK_S


class _Call:
    """One call in progress: when it started, and how to record its end."""

    def __init__(self, calls: StepCalls, purpose: CallPurpose, traced_by_sdk: bool) -> None:
        self.calls = calls
        self.purpose = purpose
        self.traced_by_sdk = traced_by_sdk
        self.started = time.time()
        self.t0 = calls.clock()

    def ms(self) -> int:
        return int((self.calls.clock() - self.t0) * 1000)

    def end(self, outcome: CallOutcome, detail: str, res: ChatResult | None = None) -> None:
        self.calls.records.append(CallRecord(self.purpose, outcome, "" if res else detail))
        # The SDK traces its own calls that answer or fail; a call its deadline cut off
        # leaves no row there, and a tool's calls never reach it.
        if self.traced_by_sdk and outcome not in ("timeout", "cancelled"):
            return
        self.calls.rows.append(
            TraceRow(
                kind="llm",
                name=self.calls.model_name,
                status=cast(Any, outcome),  # timeout / cancelled: beyond the SDK's four
                started_at=self.started,
                ms=self.ms(),
                result=detail,
                tokens_in=res.prompt_tokens if res else None,
                tokens_out=res.completion_tokens if res else None,
            )
        )


class _View:
    """``LLMClient`` for one side of the step: the SDK's loop or the tool handlers."""

    def __init__(self, calls: StepCalls, *, traced_by_sdk: bool) -> None:
        self._calls = calls
        self._traced_by_sdk = traced_by_sdk

    async def chat(
        self,
        *,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        format: dict[str, Any] | None = None,
        temperature: float = 0.2,
        max_tokens: int = 256,
    ) -> ChatResult:
        return await self._calls.chat(
            traced_by_sdk=self._traced_by_sdk,
            messages=messages,
            tools=tools,
            format=format,
            temperature=temperature,
            max_tokens=max_tokens,
        )


def merge_rows(trace: list[TraceRow], rows: Sequence[TraceRow]) -> list[TraceRow]:
    """``trace`` with ``rows`` placed by start time, the trace's own order kept: a tool's
    picture description lands between the turn that asked for the tool and the tool's
    row (which the SDK writes when the tool returns)."""
    out = list(trace)
    for row in sorted(rows, key=lambda r: r.started_at):
        at = next((i for i, r in enumerate(out) if r.started_at > row.started_at), len(out))
        out.insert(at, row)
    return out
