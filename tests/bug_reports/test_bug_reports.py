"""Public bug reports, re-created: the doctor names the report's problem, points at the line the
accepted answer changes, and every help with code, applied as printed, makes the program compute
what a hand-written correct version computes (docs/bug-reports.md has the table)."""

from __future__ import annotations

import pytest
import torch

from autograd_doctor.analysis.fixes import apply_replacement
from helpers import marked_line, run_plain, run_program
from reports import REPORTS

CONCRETE = [r for r in REPORTS if r.compare]
ADVICE = [r for r in REPORTS if not r.compare]


def _same(a, b) -> bool:
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.shape == b.shape and torch.allclose(a, b, rtol=1e-5, atol=1e-6)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def _values(namespace: dict, expressions: list[str]) -> list:
    return [eval(expression, dict(namespace)) for expression in expressions]


def _diagnosis(tmp_path, report):
    outcome = run_program(tmp_path, report.source, f"{report.name}.py")
    assert outcome.error is not None, "the re-created program must fail as the report did"
    found = [d for d in outcome.diagnoses if d.code == report.code]
    assert found, f"expected {report.code}, got {[d.code for d in outcome.diagnoses]} ({outcome.error!r})"
    return outcome, found[0]


@pytest.mark.parametrize("report", REPORTS, ids=[r.name for r in REPORTS])
def test_the_diagnosis_points_at_the_line_the_answer_changes(tmp_path, report):
    outcome, diagnosis = _diagnosis(tmp_path, report)
    want = marked_line(outcome.source, report.primary_marker)
    primary = diagnosis.primary
    assert primary is not None and primary.line <= want <= (primary.end_line or primary.line), (
        f"primary {primary.line if primary else None}, expected line {want}: {outcome.source.splitlines()[want - 1]!r}")


ELSEWHERE = [r for r in REPORTS if r.primary_marker != "PRIMARY"]


@pytest.mark.parametrize("report", ELSEWHERE, ids=[r.name for r in ELSEWHERE])
def test_the_help_changes_the_line_the_answer_changes(tmp_path, report):
    """Where the primary location is the write or the failing call, the first help with code
    changes the line the report's answer changes (the detach(), the attribute store)."""
    outcome, diagnosis = _diagnosis(tmp_path, report)
    first = next(s for s in diagnosis.help if s.replacement and s.location)
    assert first.location.line == marked_line(outcome.source, "PRIMARY"), first


@pytest.mark.parametrize("report", CONCRETE, ids=[r.name for r in CONCRETE])
def test_each_help_applied_gives_the_reference_result(tmp_path, report):
    outcome, diagnosis = _diagnosis(tmp_path, report)
    applicable = [(i, s) for i, s in enumerate(diagnosis.help) if s.replacement and s.location]
    assert applicable, f"no help with code: {[s.message for s in diagnosis.help]}"
    for index, suggestion in applicable:
        fixed = apply_replacement(outcome.source, suggestion.location, suggestion.replacement)
        expected = _values(run_plain(tmp_path, report.reference(index), "reference.py"), report.compare)
        try:
            got = _values(run_plain(tmp_path, fixed, f"fixed_{index}.py"), report.compare)
        except Exception as error:
            raise AssertionError(f"help {index} ({suggestion.message}) fails:\n{fixed}\n{error!r}") from error
        for expression, want, have in zip(report.compare, expected, got):
            assert _same(have, want), f"help {index} ({suggestion.message}): {expression} differs\n{fixed}"


@pytest.mark.parametrize("report", ADVICE, ids=[r.name for r in ADVICE])
def test_without_a_verified_change_the_help_is_advice(tmp_path, report):
    _, diagnosis = _diagnosis(tmp_path, report)
    assert diagnosis.help and all(s.replacement is None for s in diagnosis.help)
