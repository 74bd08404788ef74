"""--fix, --unsafe-fixes and --diff: exact edits, idempotent, atomic, never unparsable."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from autograd_doctor.lint import lint_source
from autograd_doctor.lint.cli import lint_main
from autograd_doctor.lint.engine import Selection
from autograd_doctor.lint.findings import Edit, Finding, Fix
from autograd_doctor.lint.fixes import apply_edits, fix_source

FIX = Path(__file__).parent / "fixtures" / "fix"
# The clone/detach and torch.tensor(t) rewrites are advice rules, and ADL002 is
# opt-in: selected by name.
ADVICE = ["--select", "ADL,ADL002,ADL007,ADL008"]
SELECTION = Selection(("ADL", "ADL002", "ADL007", "ADL008"))


def copy_fixture(tmp_path, name) -> Path:
    target = tmp_path / name
    shutil.copy(FIX / name, target)
    return target


@pytest.mark.parametrize("name, flags", [("safe.py", ["--fix"] + ADVICE),
                                         ("unsafe.py", ["--fix", "--unsafe-fixes", "--select", "ADL,ADL002"])])
def test_fix_matches_expected_and_is_idempotent(tmp_path, capsys, name, flags):
    path = copy_fixture(tmp_path, name)
    before = lint_source(path.read_text(), str(path), SELECTION)
    lint_main(flags + [str(path)])
    expected = (FIX / (name + ".fixed")).read_text(encoding="utf-8")
    assert path.read_text(encoding="utf-8") == expected
    after = lint_source(expected, str(path), SELECTION)
    fixed_codes = {(f.code, f.line) for f in before if f.fix and (f.fix.safe or "--unsafe-fixes" in flags)}
    assert not any(f.fix and (f.fix.safe or "--unsafe-fixes" in flags) for f in after)
    assert fixed_codes  # the fixture had something to fix
    lint_main(flags + [str(path)])  # fixing twice changes nothing more
    assert path.read_text(encoding="utf-8") == expected
    capsys.readouterr()


def test_safe_fix_leaves_unsafe_fixes_alone(tmp_path, capsys):
    path = copy_fixture(tmp_path, "unsafe.py")
    original = path.read_text()
    assert lint_main(["--fix", str(path)]) == 1
    assert path.read_text() == original
    assert "more fixable with `--fix --unsafe-fixes`" in capsys.readouterr().out


def test_fix_reports_remaining_findings_and_exit_code(tmp_path, capsys):
    path = copy_fixture(tmp_path, "safe.py")
    code = lint_main(["--fix", "--format", "concise", *ADVICE, str(path)])
    out = capsys.readouterr().out
    assert code == 1  # the unsafe ADL001 remains
    assert "Fixed 6 findings." in out and out.count(" ADL001 ") == 1 and "ADL007" not in out


def test_diff_shows_fixes_and_writes_nothing(tmp_path, capsys):
    path = copy_fixture(tmp_path, "safe.py")
    original = path.read_text()
    code = lint_main(["--diff", *ADVICE, str(path)])
    out = capsys.readouterr().out
    assert code == 1 and path.read_text() == original
    assert f"--- a/{path}" in out and f"+++ b/{path}" in out
    assert "-    a = t.clone().detach()    # trailing comment" in out
    assert "+    a = t.detach().clone()    # trailing comment" in out
    assert "sigmoid" not in "".join(l for l in out.splitlines() if l.startswith(("+", "-")))
    clean = tmp_path / "clean.py"
    clean.write_text("x = 1\n")
    assert lint_main(["--diff", str(clean)]) == 0 and capsys.readouterr().out == ""


def test_fix_keeps_permissions_and_encoding(tmp_path, capsys):
    path = tmp_path / "latin.py"
    src = "# -*- coding: latin-1 -*-\nimport torch\ns = 'caf\xe9'\nx = torch.randn(2, requires_grad=True)\n" \
          "y = x.clone().detach()\n"
    path.write_bytes(src.encode("latin-1"))
    os.chmod(path, 0o750)
    lint_main(["--fix", *ADVICE, str(path)])
    capsys.readouterr()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o750
    assert path.read_bytes() == src.replace("x.clone().detach()", "x.detach().clone()").encode("latin-1")
    assert [p.name for p in tmp_path.iterdir()] == ["latin.py"]  # no temp file left


def test_fix_through_a_symlink_replaces_the_target(tmp_path, capsys):
    real = tmp_path / "real.py"
    real.write_text("import torch\ny = torch.ones(2, requires_grad=True).clone().detach()\n")
    link = tmp_path / "link.py"
    os.symlink(real, link)
    lint_main(["--fix", *ADVICE, str(link)])
    capsys.readouterr()
    assert link.is_symlink() and ".detach().clone()" in real.read_text()


def test_fix_that_would_not_parse_is_not_applied():
    source = "x = 1\ny = 2\n"
    bad = Finding("ADL007", "m", "f.py", 1, 1, 1, 2, Fix("break it", (Edit(1, 1, 1, 2, "def"),), True))
    text, count = fix_source(source, lambda text: [bad] if text == source else [], unsafe=False)
    assert (text, count) == (source, 0)


def test_overlapping_edits_are_applied_one_per_round():
    source = "abcdef\n"
    f1 = Finding("ADL007", "m", "f.py", 1, 1, 1, 4, Fix("a", (Edit(1, 1, 1, 4, "X"),), True))
    f2 = Finding("ADL007", "m", "f.py", 1, 2, 1, 5, Fix("b", (Edit(1, 2, 1, 5, "Y"),), True))
    assert apply_edits(source, [f1, f2], unsafe=False) == ("Xdef\n", 1)


def test_fix_keeps_crlf_and_form_feeds(tmp_path, capsys):
    path = tmp_path / "crlf.py"
    src = "import torch\r\n# a form feed \x0c and a line separator \u2028 in a comment\r\n" \
          "x = torch.randn(2, requires_grad=True)\r\ny = x.clone().detach()\r\n"
    path.write_bytes(src.encode("utf-8"))
    lint_main(["--fix", *ADVICE, str(path)])
    capsys.readouterr()
    assert path.read_bytes() == src.replace("x.clone().detach()", "x.detach().clone()").encode("utf-8")


def test_diff_with_unsafe_fixes(tmp_path, capsys):
    path = copy_fixture(tmp_path, "unsafe.py")
    assert lint_main(["--diff", "--unsafe-fixes", str(path)]) == 1
    out = capsys.readouterr().out
    assert "+    e = e + (1 + w)" in out and "+    y = y.clone()" in out
    assert path.read_text() == (FIX / "unsafe.py").read_text()


def test_parallel_fix_gives_the_same_files(tmp_path, capsys):
    for i in range(4):
        shutil.copy(FIX / "safe.py", tmp_path / f"s{i}.py")
        shutil.copy(FIX / "unsafe.py", tmp_path / f"u{i}.py")
    lint_main(["--fix", "--unsafe-fixes", "-j", "2", *ADVICE, str(tmp_path)])
    capsys.readouterr()
    for i in range(4):
        assert (tmp_path / f"u{i}.py").read_text() == (FIX / "unsafe.py.fixed").read_text()
        assert "t.detach().clone()" in (tmp_path / f"s{i}.py").read_text()


def test_safe_fixes_respect_isinstance_guards():
    # The guard proves `targets` is not a tensor where torch.tensor() is called:
    # a fix to `targets.detach().clone()` would break a list argument.
    src = ("import torch\n\n\ndef f(targets: torch.Tensor, matrix: torch.Tensor):\n"
           "    if not isinstance(targets, torch.Tensor):\n"
           "        targets = torch.tensor(targets)\n"
           "    matrix = matrix if isinstance(matrix, torch.Tensor) else torch.tensor(matrix)\n"
           "    return targets, matrix\n")
    assert lint_source(src, "g.py", SELECTION) == []
    namespace: dict = {}
    exec(compile(src, "g.py", "exec"), namespace)
    targets, matrix = namespace["f"]([1.0, 2.0], [[1.0]])
    assert targets.tolist() == [1.0, 2.0] and matrix.tolist() == [[1.0]]
