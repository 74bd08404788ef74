"""The front ends explain an error the program raises outside PyTorch the same way.

A `.grad` that is None read after backward() (AD309) fails in the user's own code (an
AttributeError or TypeError), not in torch: the doctor explains it when the exception leaves the
watched block (`watch().__exit__`; the pytest plugin calls `explain_error` on the test's
exception; `autograd-doctor run` runs the script inside `watch()`). The in-process test helper
`run_program` catches the exception inside the block, so it never gets there: its missing AD309
was a quirk of that helper, not a difference a user sees (`run_as_script` is the helper that
mirrors `watch()` for such errors).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from helpers import run_as_script, run_cli, write_program

# The sum of every parameter's squared gradient, with a head the loss does not use.
GRADIENT_NORM = """
    import torch
    from torch import nn


    class TwoHeads(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Linear(4, 4)
            self.used = nn.Linear(4, 1)
            self.unused = nn.Linear(4, 1)

        def forward(self, x):
            return self.used(self.body(x))


    torch.manual_seed(0)
    model = TwoHeads()
    model(torch.randn(3, 4)).sum().backward()
    norm = sum(p.grad.pow(2).sum() for p in model.parameters())
"""

# The same norm over the parameters that have a gradient: correct, silent.
GRADIENT_NORM_SKIPPING_NONE = GRADIENT_NORM.replace("for p in model.parameters())",
                                                    "for p in model.parameters() if p.grad is not None)")


def _cli_codes(tmp_path, source: str, name: str) -> tuple[int, list[str]]:
    script = write_program(tmp_path, source, name)
    report_path = tmp_path / f"{name}.json"
    result = run_cli("run", "--no-rerun", "--json", str(report_path), script, cwd=str(tmp_path))
    codes = [d["code"] for d in json.loads(report_path.read_text())["diagnoses"]] if report_path.exists() else []
    return result.returncode, codes


def test_watch_and_run_explain_a_none_gradient_read_alike(tmp_path):
    outcome = run_as_script(tmp_path, GRADIENT_NORM)
    assert isinstance(outcome.error, AttributeError)
    watch_codes = [d.code for d in outcome.diagnoses]
    returncode, cli_codes = _cli_codes(tmp_path, GRADIENT_NORM, "norm.py")
    assert returncode == 1
    assert watch_codes == cli_codes == ["AD309"]


def test_the_pytest_plugin_explains_it_too(tmp_path):
    write_program(tmp_path, GRADIENT_NORM, "norm_program.py")
    (tmp_path / "test_norm.py").write_text(textwrap.dedent("""
        import os
        import runpy


        def test_norm():
            runpy.run_path(os.path.join(os.path.dirname(__file__), "norm_program.py"), run_name="__main__")
    """))
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--autograd-doctor",
                             "test_norm.py"], cwd=str(tmp_path), capture_output=True, text=True, timeout=300,
                            env=dict(os.environ))
    assert result.returncode == 1
    assert "error[AD309]" in result.stdout, result.stdout[-3000:]


def test_the_correct_twin_is_silent_under_both(tmp_path):
    outcome = run_as_script(tmp_path, GRADIENT_NORM_SKIPPING_NONE)
    assert outcome.error is None and outcome.diagnoses == []
    returncode, cli_codes = _cli_codes(tmp_path, GRADIENT_NORM_SKIPPING_NONE, "norm_twin.py")
    assert returncode == 0 and cli_codes == []
