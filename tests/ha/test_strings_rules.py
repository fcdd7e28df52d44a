"""Home Assistant's rules for translated text, kept by a test.

hassfest (the check Home Assistant core and HACS run on integrations) refuses text that
looks like HTML, URLs inside a translation, and badly formed placeholders; the frontend
shows "Translation error" for a placeholder the code does not provide, and renders a line
starting with ``+``, ``-`` or ``*`` as a bullet. The checks here:

* ``strings.json`` and ``translations/en.json`` are the same;
* no string holds ``<tag>``-like text, a URL, a placeholder inside single quotes, a
  placeholder that is not an identifier, or leading or trailing spaces; a field's help
  (``data_description``) names a field of its step; no flow text line starts as a bullet;
* every placeholder a config or options flow text uses is provided by the code: each
  flow step is run in a real Home Assistant (against the simulator and the Ollama fake),
  and each form, menu and error it shows is compared with the placeholders it was given;
  every flow text that has a placeholder must have been shown that way at least once;
* every placeholder an exception or repair text uses is provided where it is raised,
  found by reading the integration's source.
"""

from __future__ import annotations

import ast
import json
import re
import string
from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from homeassistant.const import CONF_TOKEN, CONF_URL
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.opennvr_workflows.const import (
    CONF_HARDWARE,
    CONF_OLLAMA_URL,
    CONF_TEXT_MODEL,
    CONF_TRANSPORT,
    CONF_VERIFY_SSL,
    CONF_VISION_MODEL,
    DOMAIN,
    TRANSPORT_MQTT,
    TRANSPORT_NATS,
    TRANSPORT_WEBSOCKET,
)
from custom_components.opennvr_workflows.evaluation import gate
from custom_components.opennvr_workflows.flows.steps import CONF_SKIP_AI
from tests.fakes.ollama_server import FakeOllama
from tests.fakes.opennvr_sim import OpenNVRSimulator

PACKAGE = Path(__file__).parents[2] / "custom_components" / DOMAIN
STRINGS = PACKAGE / "strings.json"
ENGLISH = PACKAGE / "translations" / "en.json"

#: hassfest's own patterns (script/hassfest/translations.py and
#: homeassistant.helpers.config_validation.string_with_no_html).
HTML = re.compile(r"<[a-z].*?>", re.IGNORECASE)
HASSFEST_URL = re.compile(
    r"(((ftp|ftps|scp|http|https|mqtt|mqtts|socket|socks5):\/\/|www\.)"
    r"[a-z0-9]+([\-\.]{1}[a-z0-9]+)*\.[a-z]{2,5}(:[0-9]{1,5})?(\/.*)?)",
    re.IGNORECASE,
)
SINGLE_QUOTED_PLACEHOLDER = re.compile(r"'{\w+}'")
#: Stricter than hassfest: any scheme, with or without a dotted host (``https://host``).
ANY_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://", re.IGNORECASE)
#: Markdown reads a line that starts like this as a list item or a quote.
BULLET = re.compile(r"^\s*([-+*]|\d+[.)]|>)\s")


def strings() -> dict[str, Any]:
    return json.loads(STRINGS.read_text(encoding="utf-8"))


def leaves(
    tree: Mapping[str, Any], path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], str]]:
    """Every text of a strings tree with its path of keys."""
    for key, value in tree.items():
        if isinstance(value, Mapping):
            yield from leaves(value, (*path, key))
        else:
            yield (*path, key), value


#: An ICU plural, ``{count, plural, one {# run} other {# runs}}``: the frontend renders
#: translations with ICU MessageFormat, so a count reads "1 run", "2 runs".
ICU_PLURAL = re.compile(
    r"\{(\w+), plural,((?:\s*(?:=\d+|zero|one|two|few|many|other) \{[^{}]*\})+)\s*\}"
)


def placeholders(text: str) -> set[str]:
    plural = set(ICU_PLURAL.findall(text))
    names = {name for name, _ in plural}
    rest = ICU_PLURAL.sub("", text)
    return names | {field for _, field, _, _ in string.Formatter().parse(rest) if field is not None}


# ── the texts themselves ─────────────────────────────────────────────────────


def test_english_translation_is_strings_json() -> None:
    assert ENGLISH.read_text(encoding="utf-8") == STRINGS.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("rule", "bad"),
    [
        ("html", "events on opennvr/<site>/<key>/event"),
        ("url", "for example https://nvr.local"),
        ("url", "For example nats://nvr.local:4222"),
        ("quoted", "Remove '{file}' first"),
        ("identifier", "Answer {0} now"),
        ("spaces", " leading"),
        ("bullet", "+ matches any site"),
    ],
)
def test_the_rules_catch_what_they_are_for(rule: str, bad: str) -> None:
    assert rule in problems(bad, flow=True)


def problems(text: str, *, flow: bool) -> set[str]:
    """The rules ``text`` breaks (``flow``: a config or options flow text)."""
    found = set()
    if HTML.search(text):
        found.add("html")
    if HASSFEST_URL.search(text) or ANY_URL.search(text):
        found.add("url")
    if SINGLE_QUOTED_PLACEHOLDER.search(text):
        found.add("quoted")
    if any(not name.isidentifier() for name in placeholders(text)):
        found.add("identifier")
    if text != text.strip():
        found.add("spaces")
    if flow and any(BULLET.match(line) for line in text.splitlines()):
        found.add("bullet")
    return found


def test_a_count_reads_in_the_singular_too() -> None:
    """Issue 23, item 19: no "1 runs" or "problem(s)": a count's noun agrees with it (an ICU
    plural), and a count sensor has no plural noun as its unit."""
    texts = dict(leaves(strings()))
    assert [".".join(p) for p, t in texts.items() if "(s)" in t] == []
    units = {".".join(p): t for p, t in texts.items() if p[-1] == "unit_of_measurement"}
    assert not {k: u for k, u in units.items() if u in ("runs", "questions", "calls")}
    waiting = strings()["issues"]["workflows_waiting_for_site"]["title"]
    assert placeholders(waiting) == {"count"}
    assert "{# workflow waits}" in waiting
    assert "{# workflows wait}" in waiting


def test_no_text_breaks_home_assistants_rules() -> None:
    broken = {
        ".".join(path): sorted(found)
        for path, text in leaves(strings())
        if (found := problems(text, flow=path[0] in ("config", "options")))
    }
    assert broken == {}


def test_field_help_names_a_field_of_its_step() -> None:
    for flow in ("config", "options"):
        for step_id, step in strings()[flow]["step"].items():
            extra = set(step.get("data_description", {})) - set(step.get("data", {}))
            assert not extra, f"{flow}.step.{step_id}: help for fields it has no label for: {extra}"


# ── flow placeholders, as the flows provide them ─────────────────────────────


class Shown:
    """What the flows showed, checked as they show it: for each form, menu or abort, the
    texts the frontend renders (the step's title, description, field labels and help, the
    errors present) against the placeholders the result carries."""

    def __init__(self, flow: str) -> None:
        self.flow = flow
        self.texts: dict[str, Any] = strings()[flow]
        self.seen: set[tuple[str, ...]] = set()

    def __call__(self, result: Mapping[str, Any]) -> Mapping[str, Any]:
        given = set(result.get("description_placeholders") or {})
        rendered: list[tuple[str, ...]] = []
        if result["type"] in (FlowResultType.FORM, FlowResultType.MENU):
            step = result["step_id"]
            assert step in self.texts["step"], f"{self.flow}: no texts for step {step}"
            rendered += [("step", *path) for path, _ in leaves(self.texts["step"][step], (step,))]
            rendered += [("error", key) for key in (result.get("errors") or {}).values()]
        elif result["type"] is FlowResultType.ABORT:
            rendered.append(("abort", result["reason"]))
        for path in rendered:
            text = self._text(path)
            missing = placeholders(text) - given
            assert not missing, f"{self.flow}.{'.'.join(path)} needs {missing}, given {given}"
            self.seen.add(path)
        return result

    def _text(self, path: tuple[str, ...]) -> str:
        node: Any = self.texts
        for key in path:
            assert key in node, f"{self.flow}: no text {'.'.join(path)}"
            node = node[key]
        assert isinstance(node, str)
        return node

    def assert_every_placeholder_text_was_shown(self) -> None:
        needing = {path for path, text in leaves(self.texts) if placeholders(text)}
        assert needing - self.seen == set(), "texts with placeholders no scenario showed"


async def test_config_flow_provides_every_placeholder_it_uses(
    hass: HomeAssistant, sim: OpenNVRSimulator, ollama: FakeOllama
) -> None:
    shown = Shown("config")
    flows = hass.config_entries.flow

    async def site_page() -> str:
        result = shown(await flows.async_init(DOMAIN, context={"source": "user"}))
        return str(result["flow_id"])

    def site(url: str | None = None) -> dict[str, Any]:
        return {CONF_URL: url or sim.url, CONF_TOKEN: sim.config.token, CONF_VERIFY_SSL: True}

    async def after_site(transport: str) -> dict[str, Any]:
        flow_id = await site_page()
        shown(await flows.async_configure(flow_id, site()))
        return shown(await flows.async_configure(flow_id, {CONF_TRANSPORT: transport}))

    # The site page and its errors.
    flow_id = await site_page()
    shown(await flows.async_configure(flow_id, site("nvr.local")))
    ok = sim.config
    for change in ({"scopes": ("cameras.view",)}, {"contract_version": "2.0.0"}):
        sim.config = replace(ok, **change)
        shown(await flows.async_configure(flow_id, site()))
    sim.config = ok
    flows.async_abort(flow_id)

    # The broker pages.
    for transport, step in ((TRANSPORT_NATS, "nats"), (TRANSPORT_MQTT, "mqtt_broker")):
        result = await after_site(transport)
        assert result["step_id"] == step
        flows.async_abort(result["flow_id"])

    # Ollama and the models, with every model error.
    result = await after_site(TRANSPORT_WEBSOCKET)
    flow_id = result["flow_id"]
    shown(await flows.async_configure(flow_id, {CONF_OLLAMA_URL: "ollama", CONF_SKIP_AI: False}))
    result = shown(
        await flows.async_configure(flow_id, {CONF_OLLAMA_URL: ollama.url, CONF_SKIP_AI: False})
    )
    assert result["step_id"] == "models"
    models = {
        CONF_VISION_MODEL: "qwen2.5vl:3b",
        CONF_TEXT_MODEL: "qwen3:1.7b",
        CONF_HARDWARE: "cpu",
    }
    ollama.models["qwen2.5vl:3b"] = ("completion",)
    shown(await flows.async_configure(flow_id, models))
    del ollama.models["qwen2.5vl:3b"]
    shown(await flows.async_configure(flow_id, models))
    await ollama.stop()
    shown(await flows.async_configure(flow_id, models))
    flows.async_abort(flow_id)

    # An entry (AI skipped), then its reauth and reconfigure pages.
    result = await after_site(TRANSPORT_WEBSOCKET)
    result = shown(
        await flows.async_configure(
            result["flow_id"], {CONF_OLLAMA_URL: ollama.url, CONF_SKIP_AI: True}
        )
    )
    assert result["type"] is FlowResultType.CREATE_ENTRY
    await hass.async_block_till_done()
    entry = result["result"]
    context = {"entry_id": entry.entry_id}
    result = shown(
        await flows.async_init(DOMAIN, context={**context, "source": "reauth"}, data=entry.data)
    )
    assert result["step_id"] == "reauth_confirm"
    flows.async_abort(result["flow_id"])
    result = shown(await flows.async_init(DOMAIN, context={**context, "source": "reconfigure"}))
    shown(await flows.async_configure(result["flow_id"], site("https//nvr.local")))

    shown.assert_every_placeholder_text_was_shown()


async def test_options_flow_provides_every_placeholder_it_uses(
    hass: HomeAssistant,
    sim: OpenNVRSimulator,
    ollama: FakeOllama,
    setup_entry: MockConfigEntry,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    shown = Shown("options")
    options = hass.config_entries.options

    async def page(step: str) -> dict[str, Any]:
        result = shown(await options.async_init(setup_entry.entry_id))
        return shown(await options.async_configure(result["flow_id"], {"next_step_id": step}))

    async def submit(result: Mapping[str, Any], data: dict[str, Any]) -> dict[str, Any]:
        return shown(await options.async_configure(result["flow_id"], data))

    for step in ("tool_policy", "limits", "approvers", "destinations", "site_rules"):
        result = await page(step)
        options.async_abort(result["flow_id"])
    result = await page("camera_roles")
    await submit(result, {"Front Door (1)": "front door"})
    result = await page("approvers")
    await submit(result, {"roles": "guard: Nobody Here"})
    result = await page("site_rules")
    await submit(result, {"facts": "word " * 400, "lists": "family cars: a"})
    result = await page("destinations")
    await submit(result, {"webhooks": "gate: ftp://relay"})
    for transport in (TRANSPORT_NATS, TRANSPORT_MQTT):
        result = await page("transport")
        await submit(result, {CONF_TRANSPORT: transport})
    result = await page("ollama")
    await submit(result, {CONF_OLLAMA_URL: "not an address", CONF_SKIP_AI: False})
    result = await submit(result, {CONF_OLLAMA_URL: ollama.url, CONF_SKIP_AI: False})
    assert result["step_id"] == "models"
    models = {
        CONF_VISION_MODEL: "qwen2.5vl:3b",
        CONF_TEXT_MODEL: "qwen3:1.7b",
        CONF_HARDWARE: "cpu",
    }
    ollama.models["qwen2.5vl:3b"] = ("completion",)
    await submit(result, models)
    del ollama.models["qwen2.5vl:3b"]
    await submit(result, models)
    ollama.models["qwen2.5vl:3b"] = ("completion", "vision")
    # the evaluation pages: a measurement that runs (one look case), then one that cannot
    cases = tmp_path / "cases"
    (cases / "look").mkdir(parents=True)
    monkeypatch.setattr(gate, "DEFAULT_CASES", cases)
    (cases / "look" / "one.yaml").write_text(
        "id: one\nsuite: look\nabout: One row.\nstep:\n  ai: { mode: look, prompt: Is it?, "
        "input: text, text: a note, decision: [yes, no] }\nexpect: { decision: yes }\n"
    )
    for broken in (False, True):
        if broken:
            (cases / "look" / "broken.yaml").write_text("id: broken\n")
        flow = await page("ollama")
        flow = await submit(flow, {CONF_OLLAMA_URL: ollama.url, CONF_SKIP_AI: False})
        flow = await submit(flow, models)
        assert flow["step_id"] == "evaluate"
        flow = await submit(flow, {"run_evaluation": True})
        assert flow["type"] is FlowResultType.SHOW_PROGRESS
        await hass.async_block_till_done()
        flow = shown(await options.async_configure(flow["flow_id"]))
        assert flow["step_id"] == ("evaluate_failed" if broken else "evaluate_done")
        await submit(flow, {})
    await ollama.stop()
    await submit(result, models)

    shown.assert_every_placeholder_text_was_shown()


# ── exceptions and repairs, as the code raises them ──────────────────────────

#: Keyword arguments of a raising call that are not placeholders.
_NOT_PLACEHOLDERS = {"translation_domain", "translation_key", "translation_placeholders"}


class SourceScan:
    """Where the integration's source names a translated text, and which placeholders it
    gives there.

    A text is named by a string literal (``"unknown_run"``) or an f-string
    (``f"setup_{err.key}"``, which names every text it can produce). The placeholders
    are read from the same call: ``translation_placeholders={...}``, the keyword
    arguments of a helper (``invalid("unknown_run", run_id=...)``), a dict literal after
    the key (``texts("approval_title", {...})``), or, when the key goes into a function
    of the integration, the dict that function passes along with it (one level)."""

    def __init__(self) -> None:
        self.functions: dict[tuple[str, str], ast.FunctionDef | ast.AsyncFunctionDef] = {}
        self.calls: list[tuple[str, ast.Call]] = []
        for path in sorted(PACKAGE.rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            where = str(path.relative_to(PACKAGE))
            for node in ast.walk(tree):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    self.functions.setdefault((where, node.name), node)
                elif isinstance(node, ast.Call):
                    self.calls.append((f"{where}:{node.lineno}", node))

    def uses(self, keys: set[str]) -> Iterator[tuple[str, str, set[str] | None]]:
        """(where, key, placeholders given, or None when they cannot be read). An
        f-string stands for the keys of its pattern that no literal names."""
        literal = {
            key
            for _, call in self.calls
            for _, expr in self._key_arguments(call)
            if isinstance(expr, ast.Constant)
            for key in self._keys(expr, keys)
        }
        for where, call in self.calls:
            for position, expr in self._key_arguments(call):
                found = self._keys(expr, keys)
                if isinstance(expr, ast.JoinedStr):
                    found -= literal
                for key in found:
                    yield where, key, self._given(call, position, where.split(":")[0])

    @staticmethod
    def _key_arguments(call: ast.Call) -> Iterator[tuple[int | None, ast.expr]]:
        for keyword in call.keywords:
            if keyword.arg == "translation_key":
                yield None, keyword.value
        yield from enumerate(call.args)

    @staticmethod
    def _keys(expr: ast.expr, keys: set[str]) -> set[str]:
        if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
            return {expr.value} & keys
        if (
            isinstance(expr, ast.JoinedStr)
            and expr.values
            and isinstance(expr.values[0], ast.Constant)
        ):
            # A key built as "prefix{...}": every key its pattern can give.
            pattern = "".join(
                re.escape(part.value) if isinstance(part, ast.Constant) else ".+"
                for part in expr.values
            )
            return {key for key in keys if re.fullmatch(pattern, key)}
        return set()

    def _given(self, call: ast.Call, position: int | None, module: str) -> set[str] | None:
        for keyword in call.keywords:
            if keyword.arg == "translation_placeholders":
                return _dict_keys(keyword.value, None)
        if any(k.arg is None for k in call.keywords):
            return None  # **placeholders: not readable here
        if named := {k.arg for k in call.keywords if k.arg is not None} - _NOT_PLACEHOLDERS:
            return named
        if position is None:
            return set()
        following = call.args[position + 1 :]
        for arg in following:
            if isinstance(arg, ast.Dict):
                return _dict_keys(arg, None)
        return self._through_function(call, position, module)

    def _function(
        self, call: ast.Call, module: str
    ) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The integration's function ``call`` calls: the one of that name in the same
        module, else the only one of that name (an imported helper)."""
        name = call.func.attr if isinstance(call.func, ast.Attribute) else None
        if isinstance(call.func, ast.Name):
            name = call.func.id
        if (module, name) in self.functions:
            return self.functions[module, name or ""]
        same = [f for (_, n), f in self.functions.items() if n == name]
        return same[0] if len(same) == 1 else None

    def _through_function(self, call: ast.Call, position: int, module: str) -> set[str] | None:
        function = self._function(call, module)
        if function is None:
            return set()  # not a function of the integration: a code, not a text
        if function.args.kwarg is not None:
            return set()  # a helper taking the placeholders as keywords: none were given
        params = [a.arg for a in function.args.args]
        if params and params[0] in ("self", "cls"):
            params = params[1:]
        if position >= len(params):
            return None
        param = params[position]
        assigned = {
            target.id: node.value
            for node in ast.walk(function)
            if isinstance(node, ast.Assign)
            for target in node.targets
            if isinstance(target, ast.Name)
        }
        for inner in ast.walk(function):
            if not isinstance(inner, ast.Call):
                continue
            for index, arg in enumerate(inner.args[:-1]):
                if isinstance(arg, ast.Name) and arg.id == param:
                    given = _dict_keys(inner.args[index + 1], assigned)
                    if given is not None:
                        return given
        return None


def _dict_keys(expr: ast.expr, assigned: Mapping[str, ast.expr] | None) -> set[str] | None:
    if isinstance(expr, ast.Name) and assigned and expr.id in assigned:
        expr = assigned[expr.id]
    if isinstance(expr, ast.Dict) and all(
        isinstance(k, ast.Constant) and isinstance(k.value, str) for k in expr.keys
    ):
        return {k.value for k in expr.keys if isinstance(k, ast.Constant)}
    return None


@pytest.mark.parametrize("section", ["exceptions", "issues"])
def test_raised_texts_are_given_their_placeholders(section: str) -> None:
    texts = {
        key: " ".join(text for _, text in leaves(value))
        for key, value in strings()[section].items()
    }
    needing = {key for key, text in texts.items() if placeholders(text)}
    scan = SourceScan()
    named: set[str] = set()
    wrong: list[str] = []
    for where, key, given in scan.uses(set(texts)):
        named.add(key)
        if given is None:
            wrong.append(f"{where}: {key}: the placeholders given cannot be read")
        elif key in needing and (missing := placeholders(texts[key]) - given):
            wrong.append(f"{where}: {key} needs {sorted(missing)}, given {sorted(given)}")
    assert wrong == []
    assert needing - named == set(), "texts with placeholders the code never names"


def test_the_source_scan_reads_each_way_a_text_is_named() -> None:
    """The scan is only as good as its reading: check it on each form it understands."""
    scan = SourceScan()
    uses = {(key, frozenset(given or ())) for _, key, given in scan.uses({"setup_ssl_error"})}
    assert ("setup_ssl_error", frozenset({"detail"})) in uses  # an f-string key
    uses = {
        (key, frozenset(given or ()))
        for _, key, given in scan.uses({"unknown_run", "approval_title", "approval_refused_reply"})
    }
    assert ("unknown_run", frozenset({"run_id"})) in uses  # a helper's keywords
    assert ("approval_title", frozenset({"workflow"})) in uses  # a dict after the key
    assert ("approval_refused_reply", frozenset({"name", "by", "replies"})) in uses  # one level


def test_a_form_shown_without_its_placeholders_is_caught() -> None:
    """The flow check fails for a form whose texts use a placeholder it was not given."""
    shown = Shown("config")
    form = {"type": FlowResultType.FORM, "step_id": "user", "errors": {}}
    with pytest.raises(AssertionError, match="url_example"):
        shown({**form, "description_placeholders": {}})
    shown({**form, "description_placeholders": {"url_example": "x"}})
    with pytest.raises(AssertionError, match="scopes"):
        shown(
            {
                **form,
                "errors": {"base": "missing_scopes"},
                "description_placeholders": {"url_example": "x"},
            }
        )
    with pytest.raises(AssertionError, match="no scenario showed"):
        shown.assert_every_placeholder_text_was_shown()
