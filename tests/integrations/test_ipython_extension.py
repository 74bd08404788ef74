"""The IPython extension in a real InteractiveShell (not mocked)."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("IPython")
from IPython.core.interactiveshell import InteractiveShell  # noqa: E402

import autograd_doctor.ipython as extension_module  # noqa: E402

ANSI = re.compile(r"\x1b\[[0-9;]*m")

BUGGY_CELL = "y = torch.sigmoid(x)\ny[1] = 2.0\ny.sum().backward()"


@pytest.fixture
def shell():
    ip = InteractiveShell.instance()
    ip.run_cell("import torch\nx = torch.randn(3, requires_grad=True)")
    ip.run_line_magic("load_ext", "autograd_doctor")
    yield ip
    ip.run_line_magic("unload_ext", "autograd_doctor")


def run(shell, capsys, cell: str):
    result = shell.run_cell(cell)
    captured = capsys.readouterr()
    return result, ANSI.sub("", captured.out + captured.err)


def test_failing_cell_shows_traceback_and_diagnosis(shell, capsys):
    result, output = run(shell, capsys, BUGGY_CELL)
    assert isinstance(result.error_in_exec, RuntimeError)
    assert "Traceback" in output and "RuntimeError" in output
    assert "error[AD101]" in output
    assert "y[1] = 2.0" in output and "modified here" in output
    assert "help: fill the entry out of place" in output
    # The displayed summary names the cell as IPython's traceback does.
    assert re.search(r"autograd-doctor: error\[AD101\] at Cell In\[\d+\], line 2 ", output)
    assert re.search(r"--> Cell In\[\d+\], line 2\n", output) and "<ipython-input-" not in output
    assert "autograd_doctor/recording" not in output  # our wrappers are hidden from the traceback
    extension = extension_module.extension_of(shell)
    assert [d.code for d in extension.last_diagnoses] == ["AD101"]


def test_other_errors_show_the_plain_traceback(shell, capsys):
    result, output = run(shell, capsys, "1 / 0")
    assert isinstance(result.error_in_exec, ZeroDivisionError)
    assert "ZeroDivisionError" in output and "autograd-doctor" not in output
    result, output = run(shell, capsys, "raise RuntimeError('not autograd')")
    assert "not autograd" in output and "autograd-doctor" not in output


def test_any_error_through_the_doctors_wrappers_shows_no_frame_of_ours(shell, capsys):
    """An IndexError raised inside torch's __setitem__, which the doctor wraps while a cell
    runs: the traceback is IPython's plain one (our handler explains RuntimeErrors only)."""
    _, output = run(shell, capsys, "y = torch.sigmoid(x)\ny[10] = 2.0")
    assert "IndexError" in output and "index 10 is out of bounds" in output
    assert "autograd_doctor" not in output and "recorder.py" not in output and "patches.py" not in output


def test_cell_magic_runs_one_cell_under_watch_with_options(shell, capsys):
    run(shell, capsys, "%autograd_doctor off")
    _, output = run(shell, capsys, BUGGY_CELL)
    assert "error[AD101]" not in output  # off: the plain PyTorch error
    _, output = run(shell, capsys, "%%autograd_doctor --strict\n" + BUGGY_CELL)
    assert "AutogradDoctorError" in output and "error[AD101]" in output
    assert "strict mode: stopped at backward(), before the engine ran" in output
    run(shell, capsys, "%autograd_doctor on")
    _, output = run(shell, capsys, BUGGY_CELL)
    assert "error[AD101]" in output


def test_full_mode_in_a_cell_names_the_save_line(shell, capsys):
    _, output = run(shell, capsys, BUGGY_CELL)
    assert "saved here" not in output and "%%autograd_doctor --full" in output  # the default mode says how
    _, output = run(shell, capsys, "%%autograd_doctor --full\n" + BUGGY_CELL)
    assert "error[AD101]" in output and "saved here" in output and "y = torch.sigmoid(x)" in output
    _, output = run(shell, capsys, "%autograd_doctor full")
    _, output = run(shell, capsys, BUGGY_CELL)
    assert "saved here" in output
    run(shell, capsys, "%autograd_doctor on")
    _, output = run(shell, capsys, BUGGY_CELL)
    assert "saved here" not in output


def test_line_magic_shows_the_last_report_and_its_graph(shell, capsys):
    run(shell, capsys, BUGGY_CELL)
    _, output = run(shell, capsys, "%autograd_doctor")
    assert output.startswith("error[AD101]")
    result = shell.run_cell("%autograd_doctor graph")
    capsys.readouterr()
    assert "SigmoidBackward0" in result.result.dot


def test_handler_failure_falls_back_to_the_normal_traceback(shell, capsys, monkeypatch):
    def broken(*args, **kwargs):
        raise ValueError("display broke")

    monkeypatch.setattr(shell, "showtraceback", broken)
    result, output = run(shell, capsys, BUGGY_CELL)
    assert isinstance(result.error_in_exec, RuntimeError)
    assert "RuntimeError" in output and "modified by an inplace operation" in output
    assert "Custom TB Handler failed" not in output
    assert shell.custom_exceptions == (RuntimeError,)  # still registered


def test_unload_restores_the_shell(shell, capsys):
    shell.run_line_magic("unload_ext", "autograd_doctor")
    assert shell.custom_exceptions == ()
    assert "structured_traceback" not in vars(shell.InteractiveTB)  # IPython's own formatter again
    _, output = run(shell, capsys, BUGGY_CELL)
    assert "error[AD101]" not in output
    shell.run_line_magic("load_ext", "autograd_doctor")


def test_rich_display_is_html_with_the_graph():
    from autograd_doctor.ipython import DiagnosesView
    import autograd_doctor
    import torch

    x = torch.randn(3, requires_grad=True)
    with autograd_doctor.watch():
        y = torch.sigmoid(x)
        y[1] = 2.0
        with pytest.raises(RuntimeError) as caught:
            y.sum().backward()
    html = DiagnosesView(autograd_doctor.diagnoses_of(caught.value))._repr_html_()
    assert 'data-code="AD101"' in html and "y[1] = 2.0" in html
    assert "<svg" in html or '<pre class="dot">' in html


def test_failing_cell_prints_its_help_as_an_unverified_patch_once(shell, capsys):
    _, output = run(shell, capsys, BUGGY_CELL)
    cell = re.search(r"--> (Cell In\[\d+\]), line 2\n", output).group(1)
    patch = output.split("(details above; `%autograd_doctor graph` draws the graph)\n", 1)[1]
    assert patch.startswith(f"autograd-doctor: the help as a patch of {cell}:\n--- a/{cell}\n+++ b/{cell}\n")
    assert "-y[1] = 2.0\n+y = y.index_fill(0, torch.tensor([1]), 2.0)\n" in patch
    assert patch.endswith("`autograd-doctor run --diff`, `pytest --autograd-doctor-patch`\n")
    assert "\nunverified: the cell runs on the kernel's state" in patch and output.count("--- a/") == 1
    shell.run_line_magic("autograd_doctor", "patch")
    assert ANSI.sub("", capsys.readouterr().out) == patch


def test_advice_only_help_prints_no_patch(shell, capsys):
    _, output = run(shell, capsys, "value = (x * 2).sum().item()\ntorch.tensor(value).backward()")
    assert "error[AD301]" in output and "--- a/" not in output and "as a patch" not in output
    shell.run_line_magic("autograd_doctor", "patch")
    assert capsys.readouterr().out == "autograd-doctor: the last report's helps are advice, not code to patch\n"


STATE_KEPT_ON_THE_MODULE = """\
class Memory(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)
        self.h = None

    def forward(self, x):
        previous = torch.zeros(3) if self.h is None else self.h
        self.h = torch.tanh(self.lin(x) + previous)
        return self.h


model = Memory()
for step in range(2):
    model(torch.ones(3)).sum().backward()
"""


def test_a_class_made_in_a_cell_is_read_for_its_help(shell, capsys):
    """A class defined in a cell has `__main__` as its module, which is not the cell: its statement
    is found through its methods' code, so the help names the line in the class, as for a script."""
    _, output = run(shell, capsys, STATE_KEPT_ON_THE_MODULE)
    assert "error[AD302]" in output
    assert re.search(r"--> Cell In\[\d+\], line 9\n", output)
    assert "self.h keeps this call's graph for the next batch" in output
    assert "+        self.h = self.h.detach()\n" in output
