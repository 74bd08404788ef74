"""AD127: DistributedDataParallel with a parameter unused in one iteration (one gloo rank).

Each run is a subprocess: a failed program leaves its process group initialised."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from catalogue import marked_line, program_source, write  # noqa: E402

from autograd_doctor.analysis.fixes import apply_replacement  # noqa: E402
from autograd_doctor.diagnosis.model import Location  # noqa: E402

MESSAGE = "Expected to have finished reduction in the prior iteration before starting a new one"

# Appended to the fixed program: the gradients it ends with, computed by hand.
CHECK = textwrap.dedent("""
    assert model.module.head.weight.grad is None  # the last step did not use head
    # loss = sum(aux_head(h)): d loss / d aux_head.weight = sum of h over the batch
    assert torch.allclose(model.module.aux_head.weight.grad, features.sum(0, keepdim=True))
    assert torch.equal(model.module.aux_head.bias.grad, torch.tensor([4.0]))
    print("CHECKED")
""")


def _run(*args, cwd):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=180, cwd=cwd)


def test_unused_parameters_are_named_and_the_fix_runs(tmp_path):
    source = program_source("ddp_unused_parameters")
    path = write(tmp_path, source, "program")
    plain = _run(path, cwd=tmp_path)
    assert plain.returncode != 0 and MESSAGE in plain.stderr

    report = tmp_path / "report.json"
    watched = _run("-m", "autograd_doctor", "run", "--json", str(report), path, cwd=tmp_path)
    assert watched.returncode == 1 and MESSAGE in watched.stderr
    diagnosis = next(d for d in json.loads(report.read_text())["diagnoses"] if d["code"] == "AD127")
    assert diagnosis["primary"]["line"] == marked_line(source, "PRIMARY")
    assert "aux_head.weight, aux_head.bias" in diagnosis["notes"][0]
    branch = next(loc for loc in diagnosis["related"] if loc["role"] == "branch")
    assert branch["source"] == "if use_aux:"

    suggestion = diagnosis["help_details"][0]
    fixed = apply_replacement(source, Location(file=path, line=suggestion["line"]), suggestion["replacement"])
    assert "find_unused_parameters=True" in fixed
    result = _run(write(tmp_path, fixed + CHECK, "fixed"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "CHECKED" in result.stdout
