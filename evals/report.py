"""The run's report: JSON for tools, a markdown table for people, several models side by side.

The report says where its answers came from. A live run names the Ollama server; a replay
names its transcript and where and when those answers were recorded, because a replay only
re-scores recorded answers: its figures are the recorded model's only when the transcript
came from a live ``evals record``, and its latencies are the replay's, not the model's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from custom_components.opennvr_workflows.evaluation.draft_scoring import DraftMetrics, DraftRow
from custom_components.opennvr_workflows.evaluation.metrics import SuiteMetrics
from custom_components.opennvr_workflows.evaluation.scoring import Row

REPORT_VERSION = 1


@dataclass
class SuiteResult:
    """One suite on one model: its metrics and rows."""

    metrics: SuiteMetrics
    rows: list[Row]


@dataclass
class DraftSuiteResult:
    """The draft suite on one model: its metrics and rows."""

    metrics: DraftMetrics
    rows: list[DraftRow]


@dataclass
class Report:
    """Everything one ``evals run`` or ``evals record`` found."""

    source: str  # "live" or "replay"
    hardware: str
    ollama: str | None = None
    replay: str | None = None
    recorded: dict[str, Any] = field(default_factory=dict)
    judge_model: str | None = None
    results: list[SuiteResult] = field(default_factory=list)
    drafts: list[DraftSuiteResult] = field(default_factory=list)
    replay_misses: int = 0

    @property
    def ok(self) -> bool:
        """Every row that is not xfail passed."""
        return all(r.metrics.ok for r in self.results) and all(d.metrics.ok for d in self.drafts)

    @property
    def stale(self) -> list[Row | DraftRow]:
        """XPASS rows: xfail markers to remove."""
        rows: list[Row | DraftRow] = [row for r in self.results for row in r.rows]
        rows += [row for d in self.drafts for row in d.rows]
        return [row for row in rows if row.stale_xfail]

    def origin(self) -> str:
        if self.source == "live":
            return f"live run against Ollama at {self.ollama}"
        where = self.recorded.get("recorded_from") or "an unknown server"
        when = self.recorded.get("recorded_at") or "an unknown time"
        return (
            f"replay of {self.replay} (answers recorded from {where} at {when}); the figures "
            "re-score recorded answers and the latencies are the replay's"
        )

    def as_json(self) -> dict[str, Any]:
        return {
            "version": REPORT_VERSION,
            "source": self.source,
            "origin": self.origin(),
            "ollama": self.ollama,
            "replay": self.replay,
            "recorded": self.recorded,
            "hardware": self.hardware,
            "judge_model": self.judge_model,
            "replay_misses": self.replay_misses,
            "ok": self.ok,
            "stale_xfail": [f"{r.suite}/{r.case_id} ({r.model})" for r in self.stale],
            "results": [
                {"metrics": asdict(r.metrics), "rows": [row.as_json() for row in r.rows]}
                for r in self.results
            ],
            "drafts": [
                {"metrics": asdict(d.metrics), "rows": [row.as_json() for row in d.rows]}
                for d in self.drafts
            ],
        }

    def markdown(self) -> str:
        lines = [f"# AI step evals: {self.origin()}", ""]
        lines.append(
            f"Hardware class {self.hardware}; judge {self.judge_model or 'none'}."
            + (
                f" **{self.replay_misses} request(s) had no recorded answer**: the cases or "
                "prompts changed since the recording."
                if self.replay_misses
                else ""
            )
        )
        lines.append("")
        if self.results:
            lines += [*table([r.metrics for r in self.results]), ""]
        if self.drafts:
            lines += [*draft_table([d.metrics for d in self.drafts]), ""]
        failed: list[Row | DraftRow] = [
            row for r in self.results for row in r.rows if row.status == "FAIL"
        ]
        failed += [row for d in self.drafts for row in d.rows if row.status == "FAIL"]
        if failed:
            lines += ["## Failed rows", ""]
            for row in failed:
                why = "; ".join(f"{c.name}: {c.detail}" for c in row.failures)
                lines.append(f"- `{row.suite}/{row.case_id}` on {row.model}: {why}")
            lines.append("")
        if self.stale:
            lines += ["## XPASS: stale xfail markers (remove them)", ""]
            for row in self.stale:
                lines.append(f"- `{row.suite}/{row.case_id}` on {row.model}: xfail {row.xfail!r}")
            lines.append("")
        xfailed: list[Row | DraftRow] = [
            row for r in self.results for row in r.rows if row.status == "XFAIL"
        ]
        xfailed += [row for d in self.drafts for row in d.rows if row.status == "XFAIL"]
        if xfailed:
            lines += ["## XFAIL: known gaps", ""]
            for row in xfailed:
                lines.append(f"- `{row.suite}/{row.case_id}` on {row.model}: {row.xfail}")
            lines.append("")
        return "\n".join(lines)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.0f}%"


def _num(value: float | None, fmt: str = ".2f") -> str:
    return "n/a" if value is None else format(value, fmt)


def table(metrics: Sequence[SuiteMetrics]) -> list[str]:
    """One markdown row per suite and model, so several models compare in one table."""
    head = (
        "| suite | model | rows | pass | fail | xfail | xpass | decision accuracy (95% CI) "
        "| needed tools | unsure | limit hits | p50 s | p95 s | AUROC confidence "
        "| AUROC self-report |"
    )
    out = [head, _rule(head)]
    for m in metrics:
        out.append(
            f"| {m.suite} | {m.model} | {m.rows} | {m.passed} | {m.failed} | {m.xfailed} "
            f"| {m.xpassed} | {m.right}/{m.rows} = {_pct(m.accuracy)} "
            f"({_pct(m.wilson_low)} to {_pct(m.wilson_high)}) "
            f"| {_pct(m.needed_tools_rate)} | {_pct(m.unsure_rate)} | {m.limit_hits} "
            f"| {_num(m.p50_s, '.1f')} | {_num(m.p95_s, '.1f')} "
            f"| {_num(m.auroc_confidence)} ({', '.join(m.confidence_sources)}) "
            f"| {_num(m.auroc_self_reported)} (n={m.self_reported_rows}) |"
        )
    return out


def draft_table(metrics: Sequence[DraftMetrics]) -> list[str]:
    """The draft suite, one row per model: the validator's pass rate first (with its 95 %
    Wilson interval), then the expected fields the drafts matched."""
    head = (
        "| suite | model | rows | pass | fail | xfail | xpass | valid drafts (95% CI) "
        "| fields matched | all fields right | repairs per valid draft | p50 s | p95 s |"
    )
    out = [head, _rule(head)]
    for m in metrics:
        out.append(
            f"| draft | {m.model} | {m.rows} | {m.passed} | {m.failed} | {m.xfailed} "
            f"| {m.xpassed} | {m.valid}/{m.rows} = {_pct(m.valid_rate)} "
            f"({_pct(m.wilson_low)} to {_pct(m.wilson_high)}) "
            f"| {m.fields_matched}/{m.fields_total} = {_pct(m.field_rate)} "
            f"| {m.all_fields} | {_num(m.mean_repairs)} "
            f"| {_num(m.p50_s, '.1f')} | {_num(m.p95_s, '.1f')} |"
        )
    return out


def _rule(head: str) -> str:
    return "|" + "---|" * (head.count("|") - 1)
