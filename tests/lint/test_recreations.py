"""Re-creations of public bug reports (tests/lint/recreations/, each citing its
source): every one really fails at run time (or, for a silent bug, its
`bug_shows()` demonstrates the wrong gradient), and the linter's default rules
find exactly the lines marked `# expect: CODE`.  Lines marked `# missed: ...`
are known misses, kept here so the recall table in docs/lint.md stays true."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from autograd_doctor.lint.engine import OPT_IN_CODES, Selection, lint_file

RECREATIONS = sorted((Path(__file__).parent / "recreations").glob("r*.py"))
MARK = re.compile(r"#\s*(expect|missed):\s*([A-Z0-9]+)?")


def marks(path: Path, kind: str) -> set[tuple[int, str]]:
    out = set()
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        m = MARK.search(line)
        if m and m.group(1) == kind:
            out.add((lineno, m.group(2) or ""))
    return out


def load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.filterwarnings("ignore::UserWarning")  # torch.tensor() of tensors warns, then fails
@pytest.mark.parametrize("path", RECREATIONS, ids=lambda p: p.stem)
def test_recreation_fails_at_run_time(path):
    module = load(path)
    if hasattr(module, "bug_shows"):  # a silent bug: the gradient is wrong, nothing raises
        assert module.bug_shows()
        return
    with pytest.raises((RuntimeError, TypeError, ValueError)):  # ValueError: "can't optimize a non-leaf Tensor"
        module.run()


@pytest.mark.parametrize("path", RECREATIONS, ids=lambda p: p.stem)
def test_linter_finds_exactly_the_marked_lines(path):
    # An opt-in rule named by an `# expect:` mark is selected for its file (as `--select ADL,ADL031`).
    opt_in = tuple(sorted({code for _, code in marks(path, "expect") if code in OPT_IN_CODES}))
    findings, _ = lint_file(str(path), selection=Selection(select=("ADL",) + opt_in))
    assert {(f.line, f.code) for f in findings} == marks(path, "expect")
    missed_lines = {line for line, _ in marks(path, "missed")}
    assert not {f.line for f in findings} & missed_lines


def test_every_recreation_cites_its_source_and_is_counted():
    # A file whose bug is missed counts as missed even where it also carries the mark of a
    # false finding of its first run (r805), so each file is counted once.
    missed = sum(bool(marks(p, "missed")) for p in RECREATIONS)
    found = sum(bool(marks(p, "expect")) and not marks(p, "missed") for p in RECREATIONS)
    assert found + missed == len(RECREATIONS) >= 15
    for p in RECREATIONS:
        assert "Source: http" in p.read_text(encoding="utf-8"), p.name
