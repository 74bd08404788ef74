"""`autograd-doctor run`: faithful to `python script.py`, plus the report."""

import json
import os
import sys

from helpers import REPO, run_cli, write_program

BUGGY = """
import torch
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = torch.sigmoid(x)
b[1] = 2
b.sum().backward()
"""


def test_run_reports_and_exits_like_python(tmp_path):
    script = write_program(tmp_path, BUGGY, "buggy.py")
    result = run_cli("run", script)
    assert result.returncode == 1
    assert "error[AD101]" in result.stderr
    assert f"--> {script}:5:1" in result.stderr
    assert "b = b.index_fill(0, torch.tensor([1]), 2.0)" in result.stderr
    assert "Traceback (most recent call last)" in result.stderr
    # Our own frames (runner, recorder) are not in the user's traceback.
    assert "autograd_doctor" not in result.stderr.split("RuntimeError:")[0]
    assert "runpy" not in result.stderr


def test_run_json_report_shape(tmp_path):
    script = write_program(tmp_path, BUGGY, "buggy.py")
    report_path = tmp_path / "out" / "report.json"
    result = run_cli("run", "--json", str(report_path), script)
    assert result.returncode == 1
    report = json.loads(report_path.read_text())
    assert report["version"] == 1
    assert report["exception"]["type"] == "RuntimeError"
    assert "modified by an inplace operation" in report["exception"]["message"]
    (diagnosis,) = report["diagnoses"]
    assert diagnosis["code"] == "AD101" and diagnosis["severity"] == "error"
    assert diagnosis["primary"] == {**diagnosis["primary"], "file": script, "line": 5, "column": 1, "source": "b[1] = 2"}
    assert [(r["role"], r["line"]) for r in diagnosis["related"]] == [("saved", 4), ("backward", 6)]
    assert diagnosis["tensor"] == {**diagnosis["tensor"], "name": "b", "shape": [3], "dtype": "float32", "device": "cpu"}
    assert diagnosis["help"][0] == "b = b.index_fill(0, torch.tensor([1]), 2.0)"


def test_run_passes_argv_path_stdin_and_exit_code(tmp_path):
    helper = tmp_path / "sibling_module.py"
    helper.write_text("VALUE = 'imported from the script directory'\n")
    script = write_program(tmp_path, """
import sys
import sibling_module
print("argv", sys.argv)
print("path0", sys.path[0])
print("stdin", sys.stdin.read().strip())
print("main", __name__)
print(sibling_module.VALUE)
sys.exit(7)
""", "prog.py")
    result = run_cli("run", script, "--flag", "value", input="hello from stdin", cwd=str(tmp_path.parent))
    assert result.returncode == 7, result.stderr
    assert f"argv ['{script}', '--flag', 'value']" in result.stdout
    assert f"path0 {os.path.dirname(script)}" in result.stdout
    assert "stdin hello from stdin" in result.stdout
    assert "main __main__" in result.stdout
    assert "imported from the script directory" in result.stdout


def test_run_module(tmp_path):
    package = tmp_path / "mypkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "train.py").write_text(BUGGY + "\n")
    result = run_cli("run", "-m", "mypkg.train", "arg1", cwd=str(tmp_path))
    assert result.returncode == 1
    assert "error[AD101]" in result.stderr
    assert "train.py:5" in result.stderr


def test_successful_program_exits_zero(tmp_path):
    script = write_program(tmp_path, "import torch\nprint((torch.ones(2) * 2).sum().item())\n", "ok.py")
    result = run_cli("run", script)
    assert result.returncode == 0
    assert result.stdout.strip() == "4.0"
    assert result.stderr == ""


def test_bad_input_one_line_errors(tmp_path):
    for args, expected in [
        (("run", str(tmp_path / "missing.py")), "can't open file"),
        (("run",), "no script given"),
        (("run", "--bogus", "x.py"), "unknown option --bogus"),
        (("run", "--json"), "--json needs a value"),
        (("run", "-m", "no_such_module_here"), "no module named"),
        (("frobnicate",), "unknown command"),
        ((), "no command given"),
        (("explain", "AD999"), "unknown code"),
    ]:
        result = run_cli(*args, cwd=str(tmp_path))
        assert result.returncode == 2, (args, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and expected in lines[0], (args, result.stderr)
        assert "Traceback" not in result.stderr


def test_syntax_error_in_script_reported_like_python(tmp_path):
    script = write_program(tmp_path, "x = (\n", "broken.py")
    result = run_cli("run", script)
    assert result.returncode == 1
    assert "SyntaxError" in result.stderr
    assert "autograd_doctor" not in result.stderr


def test_explain_prints_long_explanation():
    result = run_cli("explain", "AD101")
    assert result.returncode == 0
    assert "AD101" in result.stdout and "index_fill" in result.stdout


def test_explain_into_a_pipe_closed_early_ends_quietly():
    # `autograd-doctor explain AD101 | head -1`: no traceback of ours when the reader goes away
    import subprocess

    command = [sys.executable, "-m", "autograd_doctor", "explain", "AD101"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
        process.stdout.close()  # gone before the explanation is written
        stderr = process.stderr.read().decode()
        returncode = process.wait(timeout=120)
    assert "Traceback" not in stderr and returncode in (0, 1)


def test_console_script_entry_point(tmp_path):
    script = write_program(tmp_path, BUGGY, "buggy.py")
    console = os.path.join(os.path.dirname(sys.executable), "autograd-doctor")
    import subprocess

    result = subprocess.run([console, "run", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    assert "error[AD101]" in result.stderr
    assert "called from" not in result.stderr  # the console script itself is not a user frame


def test_demo_example_reports_the_masked_write():
    result = run_cli("run", os.path.join("examples", "broken_attention.py"), cwd=REPO)
    assert result.returncode == 1
    assert "examples/broken_attention.py:26" in result.stderr
    assert "weights = torch.where(pad_mask, 0.0, weights)" in result.stderr


NEVER_CLEARED = """
import warnings
import torch
{filters}
model = torch.nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    model(torch.randn(4, 3)).pow(2).mean().backward()
    optimizer.step()
"""


def test_run_shows_a_warning_the_programs_filters_hid_once(tmp_path):
    hidden = run_cli("run", write_program(tmp_path, NEVER_CLEARED.format(filters='warnings.simplefilter("ignore")'),
                                          "hidden.py"))
    assert hidden.returncode == 0
    assert "the program's warning filters hid this warning" in hidden.stderr
    assert hidden.stderr.count("warning[AD209]") == 1
    shown = run_cli("run", write_program(tmp_path, NEVER_CLEARED.format(filters=""), "shown.py"))
    assert shown.returncode == 0
    assert "hid this warning" not in shown.stderr and shown.stderr.count("AutogradDoctorWarning: warning[AD209]") == 1
