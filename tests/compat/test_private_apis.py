"""Every private torch API the doctor uses is checked in compat.py; without one, the doctor
says so in one line and the user's program behaves exactly as it does without the doctor.

Each test removes names from torch in a child interpreter (`delattr`, before the doctor
is imported) and runs the same two programs there with and without the doctor: a correct
training loop that prints its losses and gradients bit for bit, then a program whose
backward() fails. The names are removed in three groups (a child interpreter costs
seconds): those torch works without, those torch itself needs (F.leaky_relu needs
torch._C._nn: the programs then fail the same way with and without the doctor), and the
one the doctor cannot work without.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
import torch

from autograd_doctor import compat

CHILD = textwrap.dedent("""\
    import runpy, sys
    import torch
    paths, with_doctor, programs = sys.argv[1], sys.argv[2] == "doctor", sys.argv[3:]
    for path in paths.split(",") if paths != "-" else ():
        owner_path, name = path.rsplit(".", 1)
        owner = torch
        for part in owner_path.split(".")[1:]:
            owner = getattr(owner, part)
        delattr(owner, name)
    if with_doctor:
        import autograd_doctor
        autograd_doctor.install()
    for program in programs:
        runpy.run_path(program, run_name="__main__")
""")

CORRECT = textwrap.dedent("""\
    import torch

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Dropout(0.5), torch.nn.Linear(8, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    inputs = torch.randn(16, 4)
    for step in range(3):
        optimizer.zero_grad()
        loss = torch.nn.functional.leaky_relu(model(inputs)).pow(2).mean()
        loss.backward()
        optimizer.step()
        print(step, loss.item().hex(), [p.grad.numpy().tobytes().hex() for p in model.parameters()])
""")

BUGGY = textwrap.dedent("""\
    import torch

    x = torch.randn(3, requires_grad=True)
    y = torch.sigmoid(x)
    y[0] = 0.0  # WRITE
    y.sum().backward()
""")


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("programs")
    for name, text in (("child.py", CHILD), ("correct.py", CORRECT), ("buggy.py", BUGGY)):
        (folder / name).write_text(text)
    return folder


def run_child(programs, path: str, mode: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "child.py", path, mode, "correct.py", "buggy.py"], cwd=programs,
                          capture_output=True, text=True, timeout=120)


def doctor_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("autograd-doctor: ")]


def test_this_torch_has_every_private_api_the_doctor_uses():
    assert compat.missing() == ()
    assert all(compat.lookup(api.path) is not None for api in compat.PRIVATE_APIS)


def test_lookup_of_a_missing_name_is_none():
    assert compat.lookup("torch._C._no_such_function") is None
    assert compat.lookup("torch.autograd.graph.no_such_thing") is None


def test_nothing_removed_the_doctor_reports_and_says_nothing_about_torch(programs):
    result = run_child(programs, "-", "doctor")
    assert result.returncode == 1
    assert "error[AD101]" in result.stderr and "has no" not in result.stderr


# Names torch itself calls or imports on the way (a torch without them is broken, with or without
# the doctor).
_TORCH_CALLS = ("torch._C._nn", "torch.autograd._make_grads", "torch._C._dispatch_has_kernel_for_dispatch_key",
                "torch.jit._builtins._get_builtin_table",
                "torch.utils.checkpoint._checkpoint_without_reentrant_generator")
TORCH_WORKS_WITHOUT = [api for api in compat.PRIVATE_APIS if not api.essential and api.path not in _TORCH_CALLS]
TORCH_NEEDS = [api for api in compat.PRIVATE_APIS if api.path in _TORCH_CALLS]
ESSENTIAL = [api for api in compat.PRIVATE_APIS if api.essential]


@pytest.mark.parametrize("removed", [TORCH_WORKS_WITHOUT, TORCH_NEEDS, ESSENTIAL],
                         ids=["torch-works-without", "torch-needs", "essential"])
def test_without_private_apis_the_doctor_says_so_in_one_line_each_and_the_program_is_unchanged(programs, removed):
    paths = ",".join(api.path for api in removed)
    without = run_child(programs, paths, "plain")
    with_doctor = run_child(programs, paths, "doctor")
    assert with_doctor.returncode == without.returncode == 1
    assert with_doctor.stdout == without.stdout
    exception_line = without.stderr.rstrip().splitlines()[-1]
    assert exception_line in with_doctor.stderr.splitlines()
    said = [line for line in doctor_lines(with_doctor.stderr) if " has no " in line]
    off = ", so the doctor is off (your program runs as without it)"
    assert said == [f"autograd-doctor: torch {torch.__version__} has no {api.path}: {api.without_it}"
                    + (off if api.essential else "") for api in removed]
    assert "autograd-doctor internal error" not in with_doctor.stderr  # AUTOGRAD_DOCTOR_DEBUG=1 (conftest)
    if removed is TORCH_WORKS_WITHOUT:
        assert len(without.stdout.splitlines()) == 3  # the training loop ran
        assert "error[AD101]" in with_doctor.stderr and "y[0] = 0.0  # WRITE" in with_doctor.stderr
    if removed is ESSENTIAL:
        assert "error[" not in with_doctor.stderr  # off: no report at all
