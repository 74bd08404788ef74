"""In-process checks that the doctor leaves no trace outside its report: PyTorch's message
word for word in every mode, warnings at the user's line, tracebacks without our frames."""

from __future__ import annotations

import inspect
import os
import traceback
import warnings

import pytest
import torch

import autograd_doctor

PACKAGE_DIR = os.path.dirname(os.path.abspath(autograd_doctor.__file__)) + os.sep
MODES = {
    "light": {},
    "full": {"mode": "full"},
    "capture=mode": {"capture": "mode"},
}


class Doubled(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x * 2
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * y


def saved_output_modified():
    y = torch.ones(3, requires_grad=True).sigmoid()
    y.add_(1)
    y.sum().backward()


def saved_input_modified():  # PyTorch names the input's new grad_fn (Add)
    y = torch.ones(3, requires_grad=True) * 2
    z = y * y
    y.add_(1)
    z.sum().backward()


def saved_plain_tensor_modified():  # no grad_fn: no "which is output N of" clause
    w = torch.ones(3)
    z = torch.ones(3, requires_grad=True) * w
    w.add_(1)
    z.sum().backward()


def second_output_of_unbind_modified():
    first, second = torch.ones(2, 3, requires_grad=True).unbind()
    z = second.exp()
    z.add_(1)
    z.sum().backward()


def custom_function_output_modified():
    y = Doubled.apply(torch.ones(3, requires_grad=True))
    y.add_(1)
    y.sum().backward()


def matrix_saved_and_modified():
    w = torch.ones(2, 5, 5, dtype=torch.float64, requires_grad=True)
    scores = w.softmax(dim=-1)
    scores[0] = 0.0
    scores.sum().backward()


BUGGY = [saved_output_modified, saved_input_modified, saved_plain_tensor_modified,
         second_output_of_unbind_modified, custom_function_output_modified, matrix_saved_and_modified]


def raised_by(function, **doctor) -> RuntimeError:
    with pytest.raises(RuntimeError) as caught:
        with autograd_doctor.watch(**doctor):
            function()
    return caught.value


@pytest.mark.parametrize("anomaly", [False, True], ids=["", "anomaly mode"])
@pytest.mark.parametrize("settings", sorted(MODES))
@pytest.mark.parametrize("function", BUGGY, ids=lambda function: function.__name__)
def test_pytorch_message_is_kept_word_for_word(function, settings, anomaly):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # anomaly mode's "Error detected in ..."
        with torch.autograd.set_detect_anomaly(anomaly):
            with pytest.raises(RuntimeError) as plain:
                function()
            doctored = raised_by(function, **MODES[settings])
    assert str(doctored) == str(plain.value)
    assert doctored.args == plain.value.args
    assert autograd_doctor.diagnoses_of(doctored)  # the report is added, as notes
    assert "autograd-doctor:" in "".join(getattr(doctored, "__notes__", []))


def our_frames(error: BaseException) -> list[str]:
    """Entries of the traceback (of the error and those chained to it) that are ours."""
    found = []
    while error is not None:
        for frame, _line in traceback.walk_tb(error.__traceback__):
            code = frame.f_code
            if code.co_filename.startswith(PACKAGE_DIR) or "autograd-doctor" in code.co_name:
                found.append(f"{code.co_filename}:{code.co_name}")
        error = error.__cause__ or error.__context__
    return found


@pytest.mark.parametrize("settings", sorted(MODES))
def test_traceback_of_a_failing_backward_has_no_frame_of_ours(settings):
    error = raised_by(saved_output_modified, **MODES[settings])
    assert our_frames(error) == []
    names = [frame.f_code.co_name for frame, _ in traceback.walk_tb(error.__traceback__)]
    assert "saved_output_modified" in names and "_engine_run_backward" in names


@pytest.mark.parametrize("settings", sorted(MODES))
def test_traceback_under_the_decorator_and_chained_has_no_frame_of_ours(settings):
    @autograd_doctor.watch(**MODES[settings])
    def step():
        leaf = torch.ones(2, requires_grad=True)
        leaf.mul_(2)  # a leaf that requires grad: PyTorch raises here

    try:
        try:
            step()
        except RuntimeError as error:
            raise ValueError("step failed") from error
    except ValueError as chained:
        assert our_frames(chained) == []
        names = [frame.f_code.co_name for frame, _ in traceback.walk_tb(chained.__cause__.__traceback__)]
        assert names[-1] == "step"  # the write itself, raised by torch's C++ code
        assert autograd_doctor.diagnoses_of(chained.__cause__)[0].code == "AD102"


def caught_warnings(function, doctor: dict | None) -> list[warnings.WarningMessage]:
    """The warnings `function` raises, plainly (`doctor` None) or under watch(**doctor)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if doctor is None:
            function()
        else:
            with autograd_doctor.watch(silent="ignore", **doctor):
                function()
    return [warning for warning in caught if warning.category is not autograd_doctor.AutogradDoctorWarning]


def copies_a_tensor_on_two_lines():
    x = torch.ones(3, requires_grad=True)
    torch.tensor(x)
    torch.tensor(x * 2)


def resizes_an_out_argument():
    small = torch.empty(1)
    torch.add(torch.ones(3), 1, out=small)


@pytest.mark.parametrize("settings", ["light", "full", "capture=mode"])
@pytest.mark.parametrize("function", [copies_a_tensor_on_two_lines, resizes_an_out_argument],
                         ids=lambda function: function.__name__)
def test_torch_warnings_keep_the_users_file_and_line(function, settings):
    plain = caught_warnings(function, None)
    doctored = caught_warnings(function, MODES[settings])
    first_line = inspect.getsourcelines(function)[1]
    assert plain and [w.lineno for w in plain][0] > first_line
    assert [(w.filename, w.lineno, str(w.message)) for w in doctored] == \
        [(w.filename, w.lineno, str(w.message)) for w in plain]


def test_a_warning_shown_once_per_line_is_shown_for_each_line():
    """The 'default' action shows a warning once per location: under the doctor the
    locations stay the user's two lines, so both are shown, as without it."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        with autograd_doctor.watch(silent="ignore"):
            copies_a_tensor_on_two_lines()
    lines = [w.lineno for w in caught if w.category is UserWarning]
    assert len(lines) == 2 and lines[0] != lines[1]


class _WarningOptimizer(torch.optim.Optimizer):
    """An optimizer whose update warns (a uint8 mask is deprecated, then refused): its writes
    run in a step the doctor keeps quiet, through the look-up of known call sites."""

    def __init__(self, params):
        super().__init__(params, {})

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            for p in group["params"]:
                mask = torch.ones(p.shape, dtype=torch.uint8)
                try:
                    p.masked_scatter_(mask, torch.zeros(p.shape))
                except RuntimeError:
                    pass


def steps_an_optimizer_whose_writes_warn():
    w = torch.nn.Parameter(torch.ones(3))
    optimizer = _WarningOptimizer([w])
    for _ in range(3):  # the first step finds the call site, the later ones know it
        (w * 2).sum().backward()
        optimizer.step()


def test_warnings_of_writes_in_an_optimizer_step_keep_the_optimizers_line():
    plain = caught_warnings(steps_an_optimizer_whose_writes_warn, None)
    doctored = caught_warnings(steps_an_optimizer_whose_writes_warn, MODES["light"])
    assert len(plain) == 3 and plain[0].filename == __file__
    assert [(w.filename, w.lineno, str(w.message)) for w in doctored] == \
        [(w.filename, w.lineno, str(w.message)) for w in plain]


def _own_attributes(owner) -> dict:
    return dict(vars(owner))


@pytest.mark.parametrize("settings", sorted(MODES))
def test_torch_classes_are_as_they_were_after_the_doctor(settings):
    """Every attribute the doctor wraps while it runs is put back, and one it wrapped on a class
    that only inherited it (CheckpointFunction.apply) is removed again, so the class inherits it."""
    from torch.autograd.function import BackwardCFunction
    from torch.utils.checkpoint import CheckpointFunction

    owners = [CheckpointFunction, BackwardCFunction, torch.nn.Module, torch.optim.Optimizer,
              torch.amp.GradScaler]
    before = [_own_attributes(owner) for owner in owners]
    with autograd_doctor.watch(**MODES[settings]):
        assert "apply" in vars(CheckpointFunction)  # wrapped while it runs
        model = torch.nn.Linear(3, 1)
        torch.utils.checkpoint.checkpoint(model, torch.randn(2, 3, requires_grad=True), use_reentrant=True).sum().backward()
    after = [_own_attributes(owner) for owner in owners]
    for owner, old, new in zip(owners, before, after):
        assert old.keys() == new.keys(), owner
        assert all(old[name] is new[name] for name in old), owner
