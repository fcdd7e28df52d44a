"""What an AI Task's ``structure`` asks, in the terms a Look answers: a decision and fields.

Home Assistant's ``ai_task.generate_data`` describes the answer it wants as a structure:
field names with selectors. A Look answers with one decision among options, up to eight
fields each taking one of a few values, a reason and a confidence, or ``unsure``. The
mapping, decided here once:

* **the decision**: the select field named ``decision``, else the first select field, else
  the first boolean field (``yes`` / ``no``, answered as true / false);
* **fields**: every other select field (its options), boolean field, and whole-number field
  with at most :data:`MAX_VALUES` values (``min`` to ``max`` by a whole ``step``), answered
  with its own type;
* **one text field** gets the model's reason (a Look writes one sentence, not several);
* anything else (a select that takes several options, a decimal or unbounded number, a date,
  an entity, a second text field) cannot be answered by looking, and is refused by name with
  the reason, before the model is asked (:class:`StructureError`).

Decision options reach the model as identifiers (``No parcel`` is asked as ``no_parcel``) and
are answered with the structure's own values. An option named ``unsure`` is the Look's own
``unsure``. Without a decision field the Look decides between one option (``answered``) and
``unsure``, so its unsure is still first-class.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import probatio
from homeassistant.helpers import selector

from ...workflow.vocabulary import AI_STEP_KEYS, RESERVED_FIELD_NAMES

#: The most values one field (or the decision) may take: the contract's own cap.
MAX_VALUES: Final = 16
#: The most fields besides the decision: the contract's own cap.
MAX_FIELDS: Final = 8
#: Keys every answer carries besides the structure's fields (a text field may be ``reason``).
EXTRA_KEYS: Final = ("reason", "confidence", "unsure_reason", "run_id")
#: The one option a Look without a decision field decides.
ANSWERED: Final = "answered"
#: The Look's own outcome when it cannot tell.
UNSURE: Final = "unsure"
#: Names the step's own placeholders use, besides the reserved field names (a button
#: trigger's person).
_TAKEN: Final = RESERVED_FIELD_NAMES | {"user"}
_NOT_IDENT: Final = re.compile(r"[^a-z0-9]+")


class StructureError(Exception):
    """The structure asks for something a Look cannot answer: ``key`` names the translated
    text, ``placeholders`` fill it."""

    def __init__(self, key: str, **placeholders: Any) -> None:
        super().__init__(key)
        self.key = key
        self.placeholders = {name: str(value) for name, value in placeholders.items()}


@dataclass(frozen=True, slots=True)
class Choice:
    """A structure field answered by a choice: ``asked`` is what the model is offered, each
    mapped to the value the answer carries (the option itself, a bool, an int)."""

    name: str
    ident: str
    asked: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class TaskPlan:
    """How one structure is asked and answered (see the module docstring)."""

    decision: Choice | None = None
    fields: tuple[Choice, ...] = ()
    text: str | None = None
    #: The structure's descriptions, told to the model with the question.
    notes: tuple[str, ...] = field(default=())

    @property
    def options(self) -> tuple[str, ...]:
        """The Look's decision options."""
        if self.decision is None:
            return (ANSWERED,)
        return tuple(self.decision.asked)

    def step_fields(self) -> dict[str, list[str]]:
        """The Look's fields: identifier -> the values the model may give."""
        return {choice.ident: list(choice.asked) for choice in self.fields}

    def prompt(self, instructions: str) -> str:
        """The question as the Look asks it: the task's instructions as literal text (a
        brace in them is not a placeholder), then what each field means."""
        text = instructions.replace("{", "{{").replace("}", "}}")
        notes = "\n".join(note.replace("{", "{{").replace("}", "}}") for note in self.notes)
        return f"{text}\n\n{notes}" if notes else text

    def answer(
        self,
        decision: str,
        fields: Mapping[str, Any],
        reason: str,
        confidence: float,
        unsure_reason: str | None,
        run_id: str,
    ) -> dict[str, Any]:
        """The task's data: each structure field with its own type, and the extra keys.
        Unsure: the decision field says ``unsure`` (a boolean decision: null), the other
        fields are null, ``unsure_reason`` says why."""
        unsure = decision == UNSURE
        out: dict[str, Any] = {}
        if self.decision is not None:
            asked = self.decision.asked
            if unsure:
                out[self.decision.name] = None if _is_bool(asked) else UNSURE
            else:
                out[self.decision.name] = asked.get(decision, decision)
        for choice in self.fields:
            value = None if unsure else fields.get(choice.ident)
            out[choice.name] = choice.asked.get(str(value)) if value is not None else None
        if self.text is not None:
            out[self.text] = reason
        out.update(
            reason=reason,
            confidence=confidence,
            unsure_reason=unsure_reason if unsure else None,
            run_id=run_id,
        )
        return out


def plan_of(structure: probatio.Schema | None) -> TaskPlan:
    """The plan for ``structure`` (None: a text answer, see :func:`text_answer`); raises
    :class:`StructureError` for what a Look cannot answer."""
    if structure is None:
        return TaskPlan()
    items = [(_name(marker), _description(marker), kind) for marker, kind in _items(structure)]
    for name, _, _ in items:
        if name in EXTRA_KEYS and name != "reason":
            raise StructureError("task_field_reserved", field=name, names=", ".join(EXTRA_KEYS))
    selects = [name for name, _, kind in items if _options(kind) is not None]
    booleans = [name for name, _, kind in items if _is_boolean(kind)]
    chosen = "decision" if "decision" in selects else next(iter(selects or booleans), None)
    decision: Choice | None = None
    fields: list[Choice] = []
    texts: list[str] = []
    notes: list[str] = []
    idents: set[str] = set()
    for name, description, kind in items:
        if description:
            notes.append(f"{name}: {description}")
        if _is_text(kind):
            texts.append(name)
            continue
        asked = _asked(name, kind)
        if name == chosen:
            decision = Choice(name, name, _as_options(name, asked))
            continue
        ident = _ident(name, idents)
        idents.add(ident)
        fields.append(Choice(name, ident, asked))
    if name_reason := next((n for n, _, k in items if n == "reason" and not _is_text(k)), None):
        raise StructureError("task_field_reserved", field=name_reason, names=", ".join(EXTRA_KEYS))
    if len(texts) > 1:
        raise StructureError("task_text_twice", fields=", ".join(texts))
    if len(fields) > MAX_FIELDS:
        raise StructureError("task_too_many_fields", count=len(fields), most=MAX_FIELDS)
    return TaskPlan(decision, tuple(fields), texts[0] if texts else None, tuple(notes))


def text_answer(decision: str, reason: str) -> str:
    """A task without a structure is answered with the model's sentence (unsure or not)."""
    return reason or decision


# ── reading a structure ─────────────────────────────────────────────────────────────────


def _items(structure: probatio.Schema) -> Iterable[tuple[Any, Any]]:
    schema = getattr(structure, "schema", None)
    if not isinstance(schema, Mapping):
        raise StructureError("task_field_unsupported", field="structure", kind=type(schema))
    return schema.items()


def _name(marker: Any) -> str:
    return str(getattr(marker, "schema", marker))


def _description(marker: Any) -> str:
    description = getattr(marker, "description", None)
    return str(description).strip() if description else ""


def _kind_name(kind: Any) -> str:
    if isinstance(kind, selector.Selector):
        return str(kind.selector_type)
    return getattr(kind, "__name__", type(kind).__name__)


def _options(kind: Any) -> list[str] | None:
    """A select's option values (None: not a select)."""
    if isinstance(kind, selector.SelectSelector):
        return [o["value"] if isinstance(o, Mapping) else str(o) for o in kind.config["options"]]
    if isinstance(kind, probatio.In):
        return [str(o) for o in kind.container]
    return None


def _is_boolean(kind: Any) -> bool:
    return isinstance(kind, selector.BooleanSelector) or kind is bool


def _is_text(kind: Any) -> bool:
    if isinstance(kind, selector.TextSelector):
        return not kind.config.get("multiple", False)
    return kind is str


def _is_bool(asked: Mapping[str, Any]) -> bool:
    return set(asked.values()) == {True, False}


def _asked(name: str, kind: Any) -> dict[str, Any]:
    """What the model is offered for a field, mapped to the answer's values."""
    if isinstance(kind, selector.SelectSelector) and kind.config.get("multiple"):
        raise StructureError("task_field_multiple", field=name)
    if (options := _options(kind)) is not None:
        values = [o for o in options if o.strip().casefold() != UNSURE]
        if not values or len(values) > MAX_VALUES:
            raise StructureError(
                "task_field_too_many_values", field=name, count=len(values), most=MAX_VALUES
            )
        return {value: value for value in values}
    if _is_boolean(kind):
        return {"yes": True, "no": False}
    if isinstance(kind, selector.NumberSelector):
        return _numbers(name, kind.config)
    raise StructureError("task_field_unsupported", field=name, kind=_kind_name(kind))


def _numbers(name: str, config: Mapping[str, Any]) -> dict[str, Any]:
    low, high, step = config.get("min"), config.get("max"), config.get("step", 1)
    if low is None or high is None or step in (None, "any"):
        raise StructureError("task_field_unsupported", field=name, kind="number")
    if not all(float(v).is_integer() for v in (low, high, step)) or float(step) <= 0:
        raise StructureError("task_field_unsupported", field=name, kind="number")
    values = range(int(low), int(high) + 1, int(step))
    if not values or len(values) > MAX_VALUES:
        raise StructureError(
            "task_field_too_many_values", field=name, count=len(values), most=MAX_VALUES
        )
    return {str(v): v for v in values}


def _as_options(name: str, asked: Mapping[str, Any]) -> dict[str, Any]:
    """A decision's choices as the identifiers the contract asks of options."""
    out: dict[str, Any] = {}
    for text, value in asked.items():
        ident = _slug(text, "option")
        if ident in AI_STEP_KEYS:
            ident = f"{ident}_option"
        if ident in out:
            raise StructureError("task_options_clash", field=name, options=f"{ident}")
        out[ident] = value
    return out


def _ident(name: str, taken: set[str]) -> str:
    """A field's name as the step's field name: an identifier no step value uses."""
    base = _slug(name, "field")
    ident = f"{base}_value" if base in _TAKEN else base
    n = 2
    while ident in taken:
        ident, n = f"{base}_{n}", n + 1
    return ident


def _slug(text: str, prefix: str) -> str:
    slug = _NOT_IDENT.sub("_", text.casefold()).strip("_")
    if not slug or not slug[0].isalpha():
        slug = f"{prefix}_{slug}".rstrip("_")
    return slug[:32]
