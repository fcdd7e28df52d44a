"""Rule tables: the model reports the facts, plain rules give the decision.

Seed 000's executor draft: with ``rules`` on a step, the model reports its fields (plus a
reason and a confidence) and never the decision; the first rule whose ``when`` matches
gives it, and no match is ``unsure`` (``no_rule``). An outcome can then never contradict
the step's own facts, and the trace says which rule fired.

The SDK's loop asks the model for a ``decision``. Rather than fork the loop,
:class:`RuleTableClient` sits between the loop and the model for the decision calls only
(the ones with a ``format``): it sends a schema without ``decision``, removes the decision
instruction from the prompt, and lets the SDK read the rule's outcome from the reply. The
reply the trace records is still exactly what the model said.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from opennvr_app_sdk.agent import UNSURE, ChatResult, DecisionSpec, LLMClient, decide_message


@dataclass(frozen=True)
class RuleRow:
    """One row: when every named field has one of its values, the decision is ``then``.
    An empty ``when`` always matches (a catch-all, written last)."""

    when: Mapping[str, tuple[str, ...]]
    then: str


def first_match(rules: Sequence[RuleRow], fields: Mapping[str, Any]) -> int | None:
    """The index of the first rule ``fields`` satisfy, or None."""
    for index, rule in enumerate(rules):
        if all(fields.get(name) in values for name, values in rule.when.items()):
            return index
    return None


@dataclass
class Draw:
    """One decision draw as the rules read it: the fields the model reported, whether
    they were valid, and the rule that fired (None: none matched, or invalid)."""

    fields: dict[str, Any]
    valid: bool
    rule: int | None


def fields_schema(spec: DecisionSpec) -> dict[str, Any]:
    """The decision schema without ``decision``: what the model reports under rules."""
    schema = spec.schema()
    props = {k: v for k, v in schema["properties"].items() if k != "decision"}
    return {"type": "object", "properties": props, "required": list(props)}


def _look_suffix(spec: DecisionSpec) -> str:
    """The decision instruction the SDK's Look prompt ends with (look_messages)."""
    options = ", ".join([*spec.options, UNSURE])
    text = f"\n\nAnswer with JSON. decision: one of {options}."
    for name, values in spec.fields.items():
        text += f" {name}: one of {', '.join(values)}."
    return text


def _fields_instruction(spec: DecisionSpec, *, after_tools: bool) -> str:
    lines = ["Now report what you found." if after_tools else "Answer with JSON."]
    for name, values in spec.fields.items():
        lines.append(f"{name}: one of {list(values) if after_tools else ', '.join(values)}.")
    lines.append(
        "reason: one short sentence, citing what the tools showed. confidence: your "
        "confidence from 0 to 1. Answer with JSON only."
        if after_tools
        else "reason: one sentence naming what you saw. confidence: from 0 to 1."
    )
    return " ".join(lines)


def rewrite_for_rules(spec: DecisionSpec, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The decision call's messages with the instruction to pick a decision replaced by
    one to report the fields. A copy: the SDK's history is left as it is."""
    out = [dict(m) for m in messages]
    if not out or out[-1].get("role") != "user":
        return out
    last = out[-1]
    content = str(last.get("content") or "")
    if content == decide_message(spec)["content"]:
        last["content"] = _fields_instruction(spec, after_tools=True)
    elif content.endswith(suffix := _look_suffix(spec)):
        last["content"] = (
            content[: -len(suffix)] + "\n\n" + _fields_instruction(spec, after_tools=False)
        )
    return out


class RuledChatResult(ChatResult):
    """A decision reply whose ``decision`` the rule table gives, read on demand."""

    draw: Draw | None = None
    spec: DecisionSpec | None = None
    rules: tuple[RuleRow, ...] = ()

    def json(self) -> Any:
        data = super().json()
        if not isinstance(data, dict) or self.spec is None:
            return data
        if self.draw is None:
            fields = {name: data.get(name) for name in self.spec.fields}
            valid = all(fields[n] in values for n, values in self.spec.fields.items())
            self.draw = Draw(fields, valid, first_match(self.rules, fields) if valid else None)
        if not self.draw.valid:
            return {k: v for k, v in data.items() if k != "decision"}  # invalid_output
        rule = self.draw.rule
        return {**data, "decision": self.rules[rule].then if rule is not None else UNSURE}


class RuleTableClient:
    """An ``LLMClient`` that turns decision calls into field reports read by rules.

    Calls without a ``format`` (the tool phase, picture descriptions) pass through.
    ``draws`` lists each decision draw in order; the first is the one the step keeps."""

    def __init__(self, inner: LLMClient, spec: DecisionSpec, rules: Sequence[RuleRow]):
        self.inner = inner
        self.spec = spec
        self.rules = tuple(rules)
        self.results: list[RuledChatResult] = []

    @property
    def draws(self) -> list[Draw]:
        return [r.draw for r in self.results if r.draw is not None]

    async def chat(
        self,
        *,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        format: dict[str, Any] | None = None,
        temperature: float = 0.2,
        max_tokens: int = 256,
    ) -> ChatResult:
        if format is None:
            return await self.inner.chat(
                messages=messages,
                tools=tools,
                format=None,
                temperature=temperature,
                max_tokens=max_tokens,
            )
        res = await self.inner.chat(
            messages=rewrite_for_rules(self.spec, messages),
            tools=tools,
            format=fields_schema(self.spec),
            temperature=temperature,
            max_tokens=max_tokens,
        )
        ruled = RuledChatResult(
            content=res.content,
            tool_calls=res.tool_calls,
            message=res.message,
            model=res.model,
            prompt_tokens=res.prompt_tokens,
            completion_tokens=res.completion_tokens,
            ms=res.ms,
        )
        ruled.spec, ruled.rules = self.spec, self.rules
        self.results.append(ruled)
        return ruled
