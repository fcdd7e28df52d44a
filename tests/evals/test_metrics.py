"""The figures: percentiles, AUROC, the summary of rows, the progress bar and the table."""

from __future__ import annotations

import io

import pytest

from custom_components.opennvr_workflows.engine import wilson_interval
from custom_components.opennvr_workflows.evaluation.metrics import auroc, percentile, summarize
from custom_components.opennvr_workflows.evaluation.progress import Progress
from custom_components.opennvr_workflows.evaluation.scoring import Row, Status
from evals.report import table


def row(
    status: Status,
    *,
    right: bool,
    decision: str = "yes",
    seconds: float = 1.0,
    confidence: float = 1.0,
    self_reported: float | None = None,
    tools_ok: bool | None = None,
    limit_hit: bool = False,
) -> Row:
    return Row(
        case_id="c",
        suite="look",
        model="m",
        status=status,
        checks=[],
        decision=decision,
        expected=["yes"],
        fields={},
        reason="",
        confidence=confidence,
        confidence_source="agreement: 3 of 3 draws agree",
        self_reported=self_reported,
        unsure_reason=None,
        decision_right=right,
        needed_tools_ok=tools_ok,
        tools_run=[],
        limit_hit=limit_hit,
        seconds=seconds,
        model_calls=1,
        tool_calls=0,
    )


def test_percentile_interpolates_between_ranks() -> None:
    assert percentile([], 50) is None
    assert percentile([4.0], 95) == 4.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert percentile([3.0, 1.0, 2.0], 50) == 2.0
    assert percentile([float(i) for i in range(1, 21)], 95) == pytest.approx(19.05)


def test_auroc() -> None:
    assert auroc([0.9, 0.8, 0.3, 0.2], [True, True, False, False]) == 1.0
    assert auroc([0.1, 0.2, 0.8, 0.9], [True, True, False, False]) == 0.0
    assert auroc([0.5, 0.5], [True, False]) == 0.5
    assert auroc([0.9, 0.4, 0.6], [True, False, True]) == 1.0
    assert auroc([0.9, 0.7, 0.8], [True, False, False]) == 1.0
    assert auroc([0.6, 0.7, 0.8], [True, False, True]) == 0.5
    assert auroc([0.9, 0.8], [True, True]) is None


def test_summary_of_rows() -> None:
    rows = [
        row("PASS", right=True, seconds=1.0, confidence=1.0, self_reported=0.9, tools_ok=True),
        row("FAIL", right=False, seconds=2.0, confidence=1 / 3, self_reported=0.95),
        row(
            "FAIL",
            right=False,
            decision="unsure",
            seconds=3.0,
            confidence=0.0,
            limit_hit=True,
            tools_ok=False,
        ),
        row("XPASS", right=True, seconds=10.0, confidence=2 / 3),
        row("XFAIL", right=False, seconds=4.0, confidence=1.0, self_reported=0.2),
    ]
    m = summarize("look", "m", rows)
    assert (m.rows, m.passed, m.failed, m.xpassed, m.xfailed) == (5, 1, 2, 1, 1)
    assert m.right == 2
    assert m.accuracy == 0.4
    assert (m.wilson_low, m.wilson_high) == wilson_interval(2, 5)
    assert m.needed_tools_rate == 0.5
    assert m.needed_tools_rows == 2
    assert m.unsure_rate == 0.2
    assert m.limit_hits == 1
    assert m.p50_s == 3.0
    assert m.p95_s == pytest.approx(8.8)
    # right rows 1.0 and 2/3 against wrong 1/3, 0.0, 1.0: 4 wins, 1 tie, 1 loss of 6 pairs
    assert m.auroc_confidence == pytest.approx(4.5 / 6)
    assert m.auroc_self_reported == 0.5  # 0.9 against 0.95 (a loss) and 0.2 (a win)
    assert m.self_reported_rows == 3
    assert m.confidence_sources == ("agreement",)
    assert not m.ok
    lines = table([m])
    assert lines[0].count("|") == lines[1].count("|") == lines[2].count("|")
    assert "2/5 = 40% (" in lines[2]


def test_progress_writes_one_line_per_row_off_a_terminal() -> None:
    out = io.StringIO()
    bar = Progress(4, stream=out)
    bar.advance("look m case-a: PASS")
    bar.advance("look m case-b: FAIL")
    bar.close()
    lines = out.getvalue().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("[#######.....................] 1/4 ")
    assert lines[1].endswith("case-b: FAIL")
    quiet = io.StringIO()
    Progress(1, stream=quiet, enabled=False).advance("x")
    assert quiet.getvalue() == ""
