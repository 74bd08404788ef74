"""The two modes: the light default (no saved-tensor hooks, a write log) and the full one
(every save recorded); which options choose which; what the light mode still names on
models shaped like users' ones; `autograd-doctor run` completing a light report."""

import os
import sys

import pytest
import torch

import autograd_doctor
from autograd_doctor.doctor import Doctor
from autograd_doctor.recording import patches
from autograd_doctor.recording.listener import NullListener, OverlappingWrite
from autograd_doctor.recording.recorder import Recorder
from autograd_doctor.recording.write_log import LOG_SIZE
from helpers import apply_help, grads_equal, run_cli, run_plain, run_program, write_program

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
import models  # noqa: E402  (the benchmark's training steps)


def saved_tensor_hooks_on() -> bool:
    return torch._C._autograd._top_saved_tensors_default_hooks(False) is not None


@pytest.fixture(autouse=True)
def no_mode_variable(monkeypatch):
    monkeypatch.delenv("AUTOGRAD_DOCTOR_MODE", raising=False)


@pytest.mark.parametrize("options,mode", [
    ({}, "light"),
    ({"mode": "full"}, "full"),
    ({"strict": True}, "full"),
    ({"verify_saved": True}, "full"),
    ({"silent": "raise"}, "full"),
    ({"capture": "mode"}, "full"),
    ({"silent": "ignore"}, "light"),
    ({"mode": "light", "strict": True}, "full"),  # strict cannot work without the saves
])
def test_options_choose_the_mode(options, mode):
    with autograd_doctor.watch(**options) as doctor:
        assert doctor.mode == mode
        assert saved_tensor_hooks_on() == (mode == "full")
    assert not saved_tensor_hooks_on()


def test_environment_variable_chooses_the_mode(monkeypatch):
    monkeypatch.setenv("AUTOGRAD_DOCTOR_MODE", "full")
    with autograd_doctor.watch() as doctor:
        assert doctor.mode == "full"
    with autograd_doctor.watch(mode="light") as doctor:
        assert doctor.mode == "light"


def test_unknown_mode_is_a_clear_error():
    with pytest.raises(ValueError, match="mode must be one of"):
        autograd_doctor.watch(mode="fast")


RESNET_BUG = """
    import torch
    from torch import nn
    import torch.nn.functional as F

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(4, 4, 3, padding=1)
            self.bn = nn.BatchNorm2d(4)

        def forward(self, x):
            out = torch.sigmoid(self.bn(self.conv(x)))
            out += x  # WRITE
            return out

    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), Block(), Block())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = torch.randn(2, 3, 8, 8)
    for step in range(2):
        optimizer.zero_grad()
        loss = model(x).square().mean()
        loss.backward()  # BACKWARD
        optimizer.step()
    grads = [p.grad.clone() for p in model.parameters()]
"""


def test_light_mode_names_the_write_tensor_and_fix_in_a_resnet_block(tmp_path):
    outcome = run_program(tmp_path, RESNET_BUG)
    assert isinstance(outcome.error, RuntimeError) and "modified by an inplace operation" in str(outcome.error)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD101" and diagnosis.mode == "light"
    assert diagnosis.primary.line == outcome.line("WRITE")
    assert {loc.role: loc.line for loc in diagnosis.related}["backward"] == outcome.line("BACKWARD")
    assert diagnosis.tensor.name == "out" and diagnosis.tensor.shape == [2, 4, 8, 8]
    assert diagnosis.extra["node"] == "SigmoidBackward0" and diagnosis.extra["slot"] == "result"
    assert any('mode="full"' in note for note in diagnosis.notes)
    assert diagnosis.help[0].replacement == "out = out + x"
    fixed = run_plain(tmp_path, apply_help(outcome))

    # The fix computes what the program meant: the same gradients as an out-of-place reference.
    reference = run_plain(tmp_path, outcome.source.replace("out += x  # WRITE", "out = out + x"), "reference.py")
    assert grads_equal(fixed["grads"], reference["grads"])


def test_light_mode_failing_program_fails_the_same_way(tmp_path):
    path = write_program(tmp_path, RESNET_BUG)
    import runpy

    with pytest.raises(RuntimeError) as plain:
        runpy.run_path(path, run_name="__main__")
    outcome = run_program(tmp_path, RESNET_BUG)
    assert type(outcome.error) is type(plain.value)
    assert str(outcome.error) == str(plain.value)


@pytest.mark.parametrize("name", ["GPT-style (2 layers, d=64, AdamW)", "LSTM LM (2 layers, BPTT x3, clip)",
                                  "ResNet-style (3 blocks, 16 ch, SGD momentum)"])
@pytest.mark.parametrize("mode", ["light", "full"])
def test_training_steps_are_bitwise_equal_under_each_mode(name, mode):
    def train(watched: bool):
        step = models.WORKLOADS[name]()
        torch.manual_seed(1)  # dropout
        if watched:
            with autograd_doctor.watch(mode=mode):
                for _ in range(2):
                    step()
        else:
            for _ in range(2):
                step()
        closure = step.__closure__ or ()
        modules = [cell.cell_contents for cell in closure if isinstance(cell.cell_contents, torch.nn.Module)]
        return [p.detach().clone() for p in modules[0].parameters()]

    assert grads_equal(train(False), train(True))


def test_write_log_is_bounded_and_holds_no_tensor():
    import gc
    import weakref

    with autograd_doctor.watch() as doctor:
        tensors = [torch.zeros(4) for _ in range(LOG_SIZE + 10)]
        for tensor in tensors:
            tensor.add_(1)
        assert len(doctor.recorder.write_log.entries) == LOG_SIZE
        probe = weakref.ref(tensors[-1])
        del tensors, tensor
        gc.collect()
        assert probe() is None


def test_recorder_reports_typed_events_to_its_one_listener():
    class Heard(NullListener):
        def __init__(self):
            self.events = []

        def overlapping_write(self, event):
            self.events.append(event)

    listener = Heard()
    recorder = Recorder(light=True, listener=listener)
    patches.activate(recorder)
    try:
        a = torch.arange(12.0).reshape(3, 4)
        a -= a[:, :1]
    finally:
        patches.deactivate(recorder)
    (event,) = listener.events
    assert isinstance(event, OverlappingWrite) and event.op == "Tensor.__isub__"
    assert event.stack[0].filename == __file__


def test_doctor_is_a_listener():
    from autograd_doctor.recording.listener import Listener

    missing = [name for name in dir(Listener) if not name.startswith("_") and not hasattr(Doctor, name)]
    assert missing == []


BUGGY_SCRIPT = """\
import torch
a = torch.ones(3, requires_grad=True)
b = a.sigmoid()
b[1] = 2
b.sum().backward()
"""


def test_run_completes_a_light_report_by_running_again_under_full(tmp_path):
    script = write_program(tmp_path, BUGGY_SCRIPT, "buggy.py")
    result = run_cli("run", script)
    assert result.returncode == 1
    assert "running the program again under the full mode" in result.stderr
    assert "saved here: sigmoid keeps its output" in result.stderr
    assert "ran the program a second time under the full mode" in result.stderr
    assert result.stderr.count("error[AD101]") == 1


def test_run_no_rerun_keeps_the_light_report(tmp_path):
    script = write_program(tmp_path, BUGGY_SCRIPT, "buggy.py")
    result = run_cli("run", "--no-rerun", script)
    assert result.returncode == 1
    assert "running the program again" not in result.stderr
    assert "found by the default (light) mode" in result.stderr
    assert "modified here: version 0 -> 1" in result.stderr
    assert "saved here" not in result.stderr


def test_run_full_names_the_save_without_rerunning(tmp_path):
    script = write_program(tmp_path, BUGGY_SCRIPT, "buggy.py")
    result = run_cli("run", "--full", script)
    assert result.returncode == 1
    assert "running the program again" not in result.stderr
    assert "saved here: sigmoid keeps its output" in result.stderr
