"""torch.compile on CPU: an autograd error at compile time is explained by an eager run."""

from __future__ import annotations

import doctest
import warnings

import pytest
import torch

import autograd_doctor.integrations.compiled as compiled_module
from autograd_doctor import diagnoses_of
from autograd_doctor.integrations.compiled import compile as doctor_compile

from programs import line_of

with open(__file__) as _source:
    THIS_SOURCE = _source.read()



def backend_compiler_failed() -> type:
    """Dynamo's wrapper error, imported when a test runs (importing torch._dynamo takes
    seconds, which collection would otherwise pay)."""
    from torch._dynamo.exc import BackendCompilerFailed

    return BackendCompilerFailed


@pytest.fixture(autouse=True)
def fresh_compiler():
    torch._dynamo.reset()  # each test compiles its functions anew
    with warnings.catch_warnings():
        # AOTAutograd traces the backward in anomaly mode, which warns with the forward trace.
        warnings.simplefilter("ignore", UserWarning)
        yield
    torch._dynamo.reset()


def buggy_step(x, w):
    h = torch.sigmoid(x @ w)  # COMPILE-SAVE
    h[0] = 0.0  # COMPILE-WRITE
    return h.sum()


def fixed_step(x, w):
    h = torch.sigmoid(x @ w)
    h = h.index_fill(0, torch.tensor([0]), 0.0)  # COMPILE-FIXED: the help, applied
    return h.sum()


def correct_step(x, w):
    h = torch.sigmoid(x @ w)
    return (h * h).sum()


class BuggyNet(torch.nn.Module):
    """BatchNorm (buffers that a forward updates) and dropout (random numbers) around the bug."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.linear = torch.nn.Linear(4, 4)
        self.norm = torch.nn.BatchNorm1d(4)
        self.dropout = torch.nn.Dropout(0.5)

    def forward(self, x):
        h = torch.tanh(self.norm(self.linear(x)))
        h.mul_(2.0)  # COMPILE-MODULE-WRITE
        return self.dropout(h).sum()


def inputs():
    generator = torch.Generator().manual_seed(0)
    return torch.randn(3, 3, generator=generator), torch.randn(3, 3, generator=generator).requires_grad_()


def test_compile_failure_gets_the_eager_report_and_stays_itself():
    x, w = inputs()
    with pytest.raises(backend_compiler_failed()) as plain:
        torch.compile(buggy_step, backend="aot_eager")(x, w)
    torch._dynamo.reset()
    with pytest.raises(backend_compiler_failed()) as explained:
        doctor_compile(buggy_step, backend="aot_eager")(x, w)
    error = explained.value
    assert str(error) == str(plain.value)  # same type and message; the report is a note
    diagnosis = diagnoses_of(error)[0]
    assert diagnosis.code == "AD101"
    assert (diagnosis.primary.file, diagnosis.primary.line) == (__file__, line_of(THIS_SOURCE, "COMPILE-WRITE"))
    notes = "\n".join(error.__notes__)
    assert "h[0] = 0.0" in notes and "torch.compile failed while tracing the backward of `buggy_step`" in notes
    saved = [site for site in diagnosis.related if site.role == "saved"]
    if saved:  # the save's line is known where the doctor has a mode recording saves
        assert saved[0].line == line_of(THIS_SOURCE, "COMPILE-SAVE")


def test_the_eager_run_leaves_the_users_tensors_and_random_state_alone():
    x, w = inputs()
    x_before, w_before = x.clone(), w.detach().clone()
    rng_before = torch.random.get_rng_state()
    with pytest.raises(backend_compiler_failed()) as failure:
        doctor_compile(buggy_step, backend="aot_eager")(x, w)
    assert diagnoses_of(failure.value)
    assert torch.equal(x, x_before) and torch.equal(w.detach(), w_before)
    assert (x._version, w._version) == (0, 0) and w.grad is None
    assert torch.equal(torch.random.get_rng_state(), rng_before)


def test_compiled_module_stays_a_module_and_its_buffers_are_restored():
    model = BuggyNet()
    compiled = doctor_compile(model, backend="aot_eager")
    assert isinstance(compiled, torch.nn.Module) and list(compiled.parameters()) == list(model.parameters())
    state_before = {name: value.clone() for name, value in model.state_dict().items()}
    with pytest.raises(backend_compiler_failed()) as failure:
        compiled(torch.randn(5, 4))
    diagnosis = diagnoses_of(failure.value)[0]
    assert diagnosis.code == "AD101"
    assert diagnosis.primary.line == line_of(THIS_SOURCE, "COMPILE-MODULE-WRITE")
    for name, value in model.state_dict().items():
        assert torch.equal(value, state_before[name]), name  # running statistics included
    assert all(parameter.grad is None for parameter in model.parameters())


def test_correct_function_same_values_and_gradients_bitwise():
    x, w = inputs()
    plain_loss = torch.compile(correct_step, backend="aot_eager")(x, w)
    plain_loss.backward()
    plain_grad = w.grad.clone()
    torch._dynamo.reset()
    x2, w2 = inputs()
    loss = doctor_compile(correct_step, backend="aot_eager")(x2, w2)
    loss.backward()
    assert torch.equal(loss, plain_loss) and torch.equal(w2.grad, plain_grad)


def test_default_backend_inductor():
    x, w = inputs()
    with pytest.raises(backend_compiler_failed()) as failure:
        doctor_compile(buggy_step)(x, w)
    assert "backend='inductor'" in str(failure.value)
    assert diagnoses_of(failure.value)[0].primary.line == line_of(THIS_SOURCE, "COMPILE-WRITE")


def broken_backend(graph_module, example_inputs):
    raise RuntimeError("this backend is broken")


def test_compile_failure_that_is_no_autograd_bug_is_left_unchanged():
    x, w = inputs()
    with pytest.raises(backend_compiler_failed()) as failure:
        doctor_compile(correct_step, backend=broken_backend)(x, w)
    assert "this backend is broken" in str(failure.value)
    assert diagnoses_of(failure.value) == [] and not getattr(failure.value, "__notes__", [])


def test_docstring_example():
    result = doctest.testmod(compiled_module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0


def test_the_help_applied_compiles_and_gives_the_eager_gradient():
    x, w = inputs()
    with pytest.raises(backend_compiler_failed()) as failure:
        doctor_compile(buggy_step, backend="aot_eager")(x, w)
    suggestion = diagnoses_of(failure.value)[0].help[0].replacement
    fixed_line = THIS_SOURCE.splitlines()[line_of(THIS_SOURCE, "COMPILE-FIXED") - 1]
    assert fixed_line.split("  #")[0].strip() == suggestion.strip()
    fixed_step(x, w).backward()
    reference = w.grad.clone()
    w.grad = None
    doctor_compile(fixed_step, backend="aot_eager")(x, w).backward()
    assert torch.equal(w.grad, reference)


def test_plain_torch_compile_failure_is_explained_from_its_traceback():
    from autograd_doctor.integrations.compiled import explain_from_traceback

    model = BuggyNet()
    state_before = {name: value.clone() for name, value in model.state_dict().items()}
    with pytest.raises(backend_compiler_failed()) as failure:
        torch.compile(model, backend="aot_eager")(torch.randn(5, 4))
    found = explain_from_traceback(failure.value)
    assert [d.code for d in found] == ["AD101"] and diagnoses_of(failure.value) == found
    assert found[0].primary.line == line_of(THIS_SOURCE, "COMPILE-MODULE-WRITE")
    for name, value in model.state_dict().items():
        assert torch.equal(value, state_before[name]), name
    assert explain_from_traceback(failure.value) == []  # explained once
    assert explain_from_traceback(RuntimeError("not a compile failure")) == []


PLAIN_COMPILE_PROGRAM = """\
import warnings

import torch

warnings.simplefilter("ignore", UserWarning)


def step(x, w):
    h = torch.sigmoid(x @ w)
    h[0] = 0.0  # WRITE
    return h.sum()


x, w = torch.randn(3, 3), torch.randn(3, 3, requires_grad=True)
torch.compile(step, backend="aot_eager")(x, w).backward()
"""


def test_run_explains_a_plain_torch_compile_failure(tmp_path):
    import subprocess
    import sys

    script = tmp_path / "compiled_step.py"
    script.write_text(PLAIN_COMPILE_PROGRAM)
    plain = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    doctored = subprocess.run([sys.executable, "-m", "autograd_doctor", "run", str(script)],
                              capture_output=True, text=True, timeout=300)
    assert plain.returncode == doctored.returncode == 1
    assert "BackendCompilerFailed" in plain.stderr and "BackendCompilerFailed" in doctored.stderr
    assert "error[AD101]" not in plain.stderr
    assert "error[AD101]" in doctored.stderr
    assert f"--> {script}:{line_of(PLAIN_COMPILE_PROGRAM, 'WRITE')}:" in doctored.stderr
    assert "autograd-doctor ran it again without compiling" in doctored.stderr


def test_pytest_plugin_explains_a_plain_torch_compile_failure(tmp_path):
    import subprocess
    import sys

    test_file = tmp_path / "test_compiled.py"
    test_file.write_text(PLAIN_COMPILE_PROGRAM.replace("x, w = ", "def test_step():\n    x, w = ")
                         .replace("\ntorch.compile(step", "\n    torch.compile(step"))
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--autograd-doctor",
                             str(test_file)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert result.returncode == 1, result.stdout
    assert "error[AD101]" in result.stdout, result.stdout[-3000:]
    assert f"test_compiled.py:{line_of(PLAIN_COMPILE_PROGRAM, 'WRITE')}" in result.stdout
