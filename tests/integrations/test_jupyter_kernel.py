"""The IPython extension in a real Jupyter kernel: a notebook executed by nbclient + ipykernel."""

from __future__ import annotations

import json
import re
import sys

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

from autograd_doctor.report.render import missing_message, renderer  # noqa: E402

ANSI = re.compile(r"\x1b\[[0-9;]*m")
KERNEL_NAME = "autograd-doctor-test"

CELLS = [
    "import torch\nx = torch.randn(3, requires_grad=True)",
    "%load_ext autograd_doctor",
    "y = torch.sigmoid(x)\ny[1] = 2.0\ny.sum().backward()",
    "%autograd_doctor",
    "def step(w):\n    h = torch.tanh(w * 2)\n    h.add_(1.0)\n    return h.sum()\n\n"
    "torch.compile(step, backend='aot_eager')(x)",
    "y = torch.sigmoid(x)\ny[10] = 2.0",  # an IndexError raised through the doctor's wrapper of __setitem__
    "%%autograd_doctor --full\ny = torch.exp(x)\ny += 1\ny.sum().backward()",
    "%autograd_doctor patch",
    "import pathlib\npathlib.Path('squashing.py').write_text("
    "'import torch\\n\\n\\ndef squash(x):\\n    y = torch.sigmoid(x)\\n    y.mul_(2)\\n    return y\\n')\n"
    "import squashing",
    "squashing.squash(x).sum().backward()",
]
# The same notebook without the doctor: the cells that use it do nothing, so every cell
# keeps its execution count (`Cell In[3]`).
PLAIN_CELLS = [cell if "autograd_doctor" not in cell and "torch.compile" not in cell else "pass" for cell in CELLS]


def execute(cells: list[str], tmp_path_factory):
    """A notebook of these cells, run in a kernel started from this test's Python."""
    jupyter_dir = tmp_path_factory.mktemp("jupyter")
    spec_dir = jupyter_dir / "kernels" / KERNEL_NAME
    spec_dir.mkdir(parents=True)
    spec = {"argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "autograd-doctor test", "language": "python"}
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("JUPYTER_PATH", str(jupyter_dir))
        patch.setenv("JUPYTER_PLATFORM_DIRS", "1")
        notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
        client = nbclient.NotebookClient(notebook, kernel_name=KERNEL_NAME, timeout=120, allow_errors=True,
                                         resources={"metadata": {"path": str(jupyter_dir)}})
        client.execute()
    return notebook


@pytest.fixture(scope="module")
def executed_notebook(tmp_path_factory):
    return execute(CELLS, tmp_path_factory)


@pytest.fixture(scope="module")
def plain_notebook(tmp_path_factory):
    return execute(PLAIN_CELLS, tmp_path_factory)


def error_text(notebook, index: int) -> str:
    [error] = outputs_of(notebook, index, "error")
    return ANSI.sub("", "\n".join(error.traceback))


def outputs_of(notebook, index: int, output_type: str) -> list[dict]:
    return [output for output in notebook.cells[index].outputs if output.output_type == output_type]


def test_failing_cell_has_the_report_in_its_error_output(executed_notebook):
    [error] = outputs_of(executed_notebook, 2, "error")
    assert error.ename == "RuntimeError"
    assert error.evalue.startswith("one of the variables needed for gradient computation")
    traceback = ANSI.sub("", "\n".join(error.traceback))
    assert "error[AD101]: a tensor that autograd saved was modified in place before backward()" in traceback
    assert "y[1] = 2.0" in traceback and "modified here" in traceback
    assert "help: fill the entry out of place" in traceback
    assert "autograd_doctor/recording" not in traceback  # our own frames are hidden
    assert "asyncio" not in traceback  # the kernel's event loop is not "called from" context


def test_failing_cell_displays_the_html_report(executed_notebook):
    [shown] = outputs_of(executed_notebook, 2, "display_data")
    assert 'data-code="AD101"' in shown.data["text/html"] and "y[1] = 2.0" in shown.data["text/html"]
    assert shown.data["text/plain"].startswith("autograd-doctor: error[AD101] at ")


def test_failing_cell_displays_the_graph_as_svg(executed_notebook):
    if renderer() is None:
        pytest.skip(missing_message())  # the HTML report then shows the DOT text instead
    [shown] = outputs_of(executed_notebook, 2, "display_data")
    svg = shown.data["image/svg+xml"]
    assert svg.startswith("<svg") and "SigmoidBackward0" in svg and "STALE" in svg


def test_line_magic_prints_the_last_report_in_the_kernel(executed_notebook):
    printed = "".join(output.text for output in outputs_of(executed_notebook, 3, "stream"))
    assert printed.startswith("error[AD101]") and "y[1] = 2.0" in printed


def test_torch_compile_failure_in_a_cell_is_explained(executed_notebook):
    [error] = outputs_of(executed_notebook, 4, "error")
    assert error.ename == "BackendCompilerFailed"
    traceback = ANSI.sub("", "\n".join(error.traceback))
    assert "error[AD101]" in traceback and "h.add_(1.0)" in traceback
    assert "torch.compile failed while tracing the backward of `step`" in traceback


def test_error_output_equals_the_plain_kernels_plus_the_report(executed_notebook, plain_notebook):
    """The traceback of a failing cell is the one the kernel shows without the doctor
    (same frames, same message), followed by the report; other errors are unchanged."""
    with_doctor, plain = error_text(executed_notebook, 2), error_text(plain_notebook, 2)
    assert with_doctor.startswith(plain + "\nautograd-doctor:\nerror[AD101]")
    assert error_text(executed_notebook, 5) == error_text(plain_notebook, 5)


def test_locations_are_named_as_ipython_names_cells(executed_notebook):
    """`Cell In[3], line 2`, as in IPython's own traceback, never the kernel's temporary file."""
    traceback = error_text(executed_notebook, 2)
    assert "Cell In[3], line 3" in traceback  # IPython's own line for the failing call
    assert "  --> Cell In[3], line 2\n" in traceback  # the report's line for the write
    assert "ipykernel_" not in traceback
    [shown] = outputs_of(executed_notebook, 2, "display_data")
    assert shown.data["text/plain"].startswith("autograd-doctor: error[AD101] at Cell In[3], line 2 ")
    assert "Cell In[3], line 2" in shown.data["text/html"] and "ipykernel_" not in shown.data["text/html"]


def printed_by(notebook, index: int) -> str:
    return "".join(output.text for output in outputs_of(notebook, index, "stream"))


def test_failing_cell_prints_its_help_as_an_unverified_patch(executed_notebook):
    """The changed cell as a diff, named as IPython names the cell, and *unverified*: a cell runs
    on the kernel's state, so the change is never run (nothing the user has is touched)."""
    assert printed_by(executed_notebook, 2) == (
        "autograd-doctor: the help as a patch of Cell In[3]:\n"
        "--- a/Cell In[3]\n"
        "+++ b/Cell In[3]\n"
        "@@ -1,3 +1,3 @@\n"
        " y = torch.sigmoid(x)\n"
        "-y[1] = 2.0\n"
        "+y = y.index_fill(0, torch.tensor([1]), 2.0)\n"
        " y.sum().backward()\n"
        "unverified: the cell runs on the kernel's state (what earlier cells made, and what this cell changed before "
        "it failed), which a copy cannot rebuild, so the changed cell was not run; check it as a script or a test: "
        "`autograd-doctor run --diff`, `pytest --autograd-doctor-patch`\n")


def test_line_magic_patch_shows_the_last_help_again(executed_notebook):
    """`%autograd_doctor patch` after the `%%autograd_doctor` cell: its patch again, the cell named
    as the report names it."""
    [cell] = re.findall(r"  --> (Cell In\[\d+\]), line 2\n", error_text(executed_notebook, 6))
    printed = printed_by(executed_notebook, 7)
    assert printed.startswith(f"autograd-doctor: the help as a patch of {cell}:\n--- a/{cell}\n")
    assert "-y += 1\n+y = y + 1\n" in printed and "\nunverified: the cell runs on the kernel's state" in printed
    assert printed_by(executed_notebook, 6) == printed  # printed once by the failure, the same


def test_a_help_in_a_module_the_notebook_imports_is_an_unverified_patch_of_that_file(executed_notebook):
    printed = printed_by(executed_notebook, 9)
    assert printed.startswith("autograd-doctor: the help as a patch of squashing.py:\n--- a/squashing.py\n"
                              "+++ b/squashing.py\n"), printed
    assert "-    y.mul_(2)\n+    y = y.mul(2)\n" in printed
    assert printed.rstrip("\n").endswith(
        "unverified: the failing call comes from this notebook, whose state a copy cannot rebuild, so the changed "
        "squashing.py was not run; check it as a script or a test: `autograd-doctor run --diff`, "
        "`pytest --autograd-doctor-patch`")


def test_cell_magic_shows_no_kernel_machinery(executed_notebook):
    """A `%%autograd_doctor` cell runs inside `get_ipython().run_cell_magic(...)`: that call
    is IPython's, not a line of the user's to show as "called from"."""
    traceback = error_text(executed_notebook, 6)
    assert "error[AD101]" in traceback and "saved here" in traceback and "y += 1" in traceback
    assert "run_cell_magic" not in traceback and "called from" not in traceback
    assert "ipykernel_" not in traceback and "autograd_doctor/" not in traceback
