"""The report's text, over every program the tests have: every help is valid Python, the
first help is not an "or", tensors are named or left unnamed (never `tensor: tensor`), a
source line is shown once, and the text, the JSON, the picture and the warning agree.
"""

from __future__ import annotations

import glob
import json
import os
import re
import textwrap
import warnings

import pytest

import autograd_doctor
from helpers import REPO, run_cli, run_program, write_program

TESTS = os.path.join(REPO, "tests")
# The catalogue's programs, the re-created public bug reports, and the helps cases: every
# kind of diagnosis the doctor makes, with the helps it gives for them.
PROGRAM_FILES = sorted(glob.glob(os.path.join(TESTS, "errors", "programs", "*.py"))
                       + glob.glob(os.path.join(TESTS, "bug_reports", "programs", "*.py")))
NEEDS_A_PROCESS_GROUP = {"ddp_unused_parameters"}
WATCH_OPTIONS = {"default": {}, "full": {"mode": "full"}, "capture-mode": {"capture": "mode"}}


def _programs() -> list[tuple[str, str]]:
    import sys

    sys.path.insert(0, os.path.join(TESTS, "helps"))
    try:
        from cases import ADVICE_ONLY, CASES
    finally:
        sys.path.remove(os.path.join(TESTS, "helps"))
    programs = []
    for path in PROGRAM_FILES:
        name = os.path.basename(path)[:-3]
        if name not in NEEDS_A_PROCESS_GROUP:
            with open(path, encoding="utf-8") as stream:
                programs.append((name, stream.read()))
    programs += [(case.name, textwrap.dedent(case.buggy)) for case in CASES + ADVICE_ONLY]
    return programs


def help_blocks(text: str) -> list[tuple[str, str]]:
    """(message, code) of each `help:` in a rendered report; code as printed, gutter removed."""
    blocks = []
    for chunk in text.split("\nhelp: ")[1:]:
        lines = chunk.splitlines()
        code = [m.group(1) for m in (re.match(r"^ *\d* \| (.*)$", line) for line in lines[1:]) if m]
        blocks.append((lines[0], "\n".join(code)))
    return blocks


def shown_source_lines(text: str) -> list[str]:
    """The numbered source lines in the part of a report above its helps."""
    return [line for line in text.split("\nhelp: ")[0].splitlines() if re.match(r"^ *\d+ \| ", line)]


@pytest.mark.parametrize("options", sorted(WATCH_OPTIONS))
def test_every_help_compiles_and_reads_well(tmp_path, options):
    seen = 0
    problems = []
    for name, source in _programs():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            outcome = run_program(tmp_path, source, f"{name}.py", **WATCH_OPTIONS[options])
        for diagnosis in outcome.diagnoses:
            text = str(diagnosis)
            for index, (message, code) in enumerate(help_blocks(text)):
                if index == 0 and re.match(r"or\b", message):
                    problems.append(f"{name} {diagnosis.code}: the first help begins with 'or': {message}")
                if code:
                    seen += 1
                    try:
                        compile(textwrap.dedent(code), "<help>", "exec")
                    except SyntaxError as error:
                        problems.append(f"{name} {diagnosis.code}: help is not Python ({error.msg}):\n{code}")
            if "= tensor: tensor," in text:
                problems.append(f"{name} {diagnosis.code}: an unnamed tensor is called `tensor`")
            lines = shown_source_lines(text)
            if len(lines) != len(set(lines)):
                problems.append(f"{name} {diagnosis.code}: a source line is shown more than once:\n{text}")
    assert not problems, "\n\n".join(problems)
    assert seen > 40  # the walk did reach the helps with code


def test_help_blocks_reads_the_code_as_printed():
    text = ("error[AD101]: t\n  --> p.py:4:1\n   |\n 4 | y[0] = 1\n   | ^^^^^^^^\n   |\n"
            "help: copy first\n   |\n 4 |     y = y.clone()\n   |     y[0] = 1\n   = (replaces lines 4-5)\n"
            "help: or do not")
    assert help_blocks(text) == [("copy first", "    y = y.clone()\n    y[0] = 1"), ("or do not", "")]


MODULE_RELU = """
import torch
torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Sigmoid(), torch.nn.ReLU(inplace=True))
x = torch.randn(2, 3)
net(x).sum().backward()  # WRITE BACKWARD
"""


def test_a_line_with_two_marks_is_shown_once_and_an_unnamed_tensor_has_no_name(tmp_path):
    outcome = run_program(tmp_path, MODULE_RELU)
    text = str(outcome.diagnosis)
    line = outcome.line("WRITE")
    numbered = [row for row in text.splitlines() if row.startswith(f"{line:>2} | ")]
    assert numbered == [f"{line:>2} | net(x).sum().backward()  # WRITE BACKWARD"], text
    marks = text.split(numbered[0] + "\n")[1].splitlines()[:2]
    assert marks[0].endswith("modified here: version 0 -> 1") and marks[0].lstrip(" |").startswith("------ ")
    assert marks[1].endswith("backward needed the old value here")
    assert "   = tensor: float32[2, 4] on cpu, saved at version 0, found at version 1" in text
    assert outcome.diagnosis.to_dict()["tensor"]["name"] is None


FIRST_HELP_WAS_AN_ALTERNATIVE = """
import torch
w = torch.randn(3, requires_grad=True)
data = [torch.randn(3) for _ in range(3)]
loss = 0
for x in data:
    loss += (w * x).sum()
for epoch in range(2):
    loss.backward()
"""


def test_the_first_help_does_not_begin_with_or(tmp_path):
    outcome = run_program(tmp_path, FIRST_HELP_WAS_AN_ALTERNATIVE)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD302"]
    first_message = diagnosis.help[0].message
    assert not first_message.startswith("or")
    assert "\nhelp: if both backward passes are meant to go through the same graph" in str(diagnosis)
    assert diagnosis.to_dict()["help_details"][0]["message"].startswith("if both backward passes")
    from autograd_doctor.report.html import render_diagnosis_html

    assert "<b>help:</b> if both backward passes" in render_diagnosis_html(diagnosis)


DATA_WRITE = """
import torch
x = torch.randn(3, requires_grad=True)
y = x.sigmoid()
y.data[0] = 1.0  # WRITE
y.sum().backward()
"""


def test_a_warning_starts_with_its_headline_and_says_where_python_quotes_it(tmp_path):
    path = write_program(tmp_path, DATA_WRITE)
    result = run_cli("run", "--full", path)
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    assert lines[0] == (f"{path}:5: AutogradDoctorWarning: warning[AD201]: a saved tensor was changed through "
                        "an alias PyTorch does not track; the gradient is silently wrong")
    at = lines.index(f"   = warned at {path}:5:")
    assert lines[at + 1] == "  y.data[0] = 1.0  # WRITE"  # Python's own quote of the warning's line
    assert "   = tensor: y, float32[3] on cpu" in lines


OUT_WRITE = """
import torch
x = torch.randn(3, requires_grad=True)
y = x.sigmoid()  # SAVE
torch.add(x.detach(), 1.0, out=y.detach())  # WRITE
y.sum().backward()  # BACKWARD
"""


def test_the_default_mode_names_the_capture_that_sees_an_out_write_and_the_rerun_says_what_happened(tmp_path):
    path = write_program(tmp_path, OUT_WRITE)
    result = run_cli("run", path)
    assert result.returncode == 1
    report = result.stderr.split("autograd-doctor:\nerror[AD101]")[1]
    assert "`autograd-doctor run --capture mode` or watch(capture=\"mode\") also sees `out=` writes" in report
    assert "did not fail the same way" not in report
    assert "ran the program a second time under the full mode to find where the tensor was saved" in report
    assert f" 4 | y = x.sigmoid()  # SAVE" in report  # the second run's save line
    # And the capture it names does see the write, with a help that is Python.
    result = run_cli("run", "--capture", "mode", path)
    report = result.stderr.split("autograd-doctor:\nerror[AD101]")[1]
    assert f"--> {path}:5:1" in report and "modified here: version 0 -> 1" in report
    assert "not seen" not in report
    (code,) = [code for _, code in help_blocks("error" + report) if code]
    compile(code, "<help>", "exec")


def test_run_json_counts_columns_from_1_like_the_text_and_lint(tmp_path):
    example = os.path.join(REPO, "examples", "broken_attention.py")
    report_path = tmp_path / "report.json"
    result = run_cli("run", "--no-rerun", "--json", str(report_path), example)
    pointer = re.search(r"--> (\S+):(\d+):(\d+)", result.stderr)
    (diagnosis,) = json.loads(report_path.read_text())["diagnoses"]
    primary = diagnosis["primary"]
    assert (primary["line"], primary["column"]) == (int(pointer.group(2)), int(pointer.group(3))) == (26, 9)
    source = "        weights[pad_mask] = 0.0  # do not attend to padding"
    assert source[primary["column"] - 1:primary["end_column"] - 1] == "weights[pad_mask] = 0.0"
    lint = run_cli("lint", "--format", "json", "--select", "ADL001", example)
    (finding,) = json.loads(lint.stdout)
    assert (finding["line"], finding["column"]) == (primary["line"], primary["column"])


def test_the_picture_of_a_default_mode_report_has_the_save_line_the_text_has(tmp_path):
    example = os.path.join(REPO, "examples", "broken_attention.py")
    picture = tmp_path / "graph.dot"
    result = run_cli("run", "--graph", str(picture), example)
    assert "saved here: softmax keeps its output" in result.stderr  # the second run's save line
    assert "saved at broken_attention.py:25\\nweights = scores.softmax(dim=-1)" in picture.read_text()


KEPT_VIEWS = """
import torch
buf = torch.zeros(3)
kept = []
for step in range(3):
    buf.copy_(torch.full((3,), float(step)))  # WRITE
    kept.append({view})
"""


@pytest.mark.parametrize("view, options, found", [
    ("buf.view(3)", {"mode": "full"}, True),
    ("buf.view(3)", {"capture": "mode"}, True),
    ("buf[:]", {"capture": "mode"}, True),
    ("buf[:]", {"mode": "full"}, False),  # indexing is not wrapped: the README's table says so
    ("buf.view(3)", {}, False),           # the default mode records no views
])
def test_which_mode_sees_a_view_kept_across_writes(tmp_path, view, options, found):
    """What the README's table of modes says about AD204: `--capture mode` sees both kinds of view."""
    outcome = run_program(tmp_path, KEPT_VIEWS.format(view=view), **options)
    codes = [d.code for d in outcome.diagnoses]
    assert ("AD204" in codes) is found, codes
    if found:
        (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD204"]
        assert diagnosis.primary.line == outcome.line("WRITE")
