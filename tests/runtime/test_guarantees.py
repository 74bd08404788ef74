"""What the doctor promises: same gradients, no tensors kept alive, the user's error intact."""

import gc
import os
import traceback
import weakref

import pytest
import torch
from torch import nn

import autograd_doctor
from autograd_doctor.analysis import diagnose
from helpers import run_program


def _mlp_step():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(inplace=True), nn.Linear(16, 4), nn.LogSoftmax(dim=-1))
    x = torch.randn(5, 8)
    loss = -model(x)[:, 0].mean()
    loss.backward()
    return [p.grad for p in model.parameters()]


def _conv_step():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(inplace=True), nn.Flatten(), nn.Linear(4 * 6 * 6, 2))
    loss = model(torch.randn(2, 3, 8, 8)).sigmoid().sum()
    loss.backward()
    return [p.grad for p in model.parameters()]


def _transformer_step():
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32, dropout=0.1, batch_first=True)
    out = layer(torch.randn(2, 5, 16))
    out.pow(2).mean().backward()
    return [p.grad for p in layer.parameters()]


def _gru_step():
    torch.manual_seed(0)
    rnn = nn.GRU(4, 8, batch_first=True)
    out, h = rnn(torch.randn(3, 6, 4))
    (out.sum() + h.sum()).backward()
    return [p.grad for p in rnn.parameters()]


def _gradient_penalty_step():
    torch.manual_seed(0)
    critic = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
    x = torch.randn(6, 3, requires_grad=True)
    score = critic(x)
    (grad_x,) = torch.autograd.grad(score.sum(), x, create_graph=True)
    loss = ((grad_x.norm(2, dim=1) - 1) ** 2).mean() + score.mean()
    loss.backward()
    return [p.grad for p in critic.parameters()] + [x.grad]


@pytest.mark.parametrize("step", [_mlp_step, _conv_step, _transformer_step, _gru_step, _gradient_penalty_step],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("capture", ["patch", "mode"])
def test_gradients_bitwise_equal_with_and_without_watch(step, capture):
    plain = step()
    with autograd_doctor.watch(capture=capture):
        watched = step()
    assert len(plain) == len(watched)
    for a, b in zip(plain, watched):
        assert torch.equal(a, b)


@pytest.mark.parametrize("mode", ["light", "full"])
def test_saved_output_not_kept_alive_after_graph_dies(mode):
    x = torch.randn(3, requires_grad=True)
    with autograd_doctor.watch(mode=mode) as doctor:
        y = torch.sigmoid(x)  # sigmoid saves its output: a naive hook would make a cycle
        z = torch.exp(y)
        output_ref, intermediate_ref = weakref.ref(y), weakref.ref(z)
        del y, z
        gc.collect()
        assert output_ref() is None and intermediate_ref() is None


@pytest.mark.parametrize("mode", ["light", "full"])
def test_saved_tensors_released_after_backward(mode):
    with autograd_doctor.watch(mode=mode) as doctor:
        x = torch.randn(64, 64, requires_grad=True)
        h = torch.tanh(x @ x)
        h_ref = weakref.ref(h)
        loss = h.sum()
        loss.backward()
        del h
        gc.collect()
        # The graph (held by `loss`) is alive, but backward freed its saved tensors.
        assert h_ref() is None
        assert all(ref() is None for refs in doctor.recorder.saves_by_storage.values() for ref in refs)


@pytest.mark.parametrize("mode", ["light", "full"])
def test_recording_writes_keeps_no_tensor_alive(mode):
    with autograd_doctor.watch(mode=mode):
        w = torch.randn(3, requires_grad=True)
        buffer = torch.randn(3)
        y = w * buffer
        buffer.mul_(2)  # recorded: it hits the saved `buffer`
        buffer_ref, y_ref = weakref.ref(buffer), weakref.ref(y)
        del buffer, y
        gc.collect()
        assert buffer_ref() is None and y_ref() is None


@pytest.mark.parametrize("mode", ["light", "full"])
def test_entering_no_grad_keeps_no_local_tensor_alive(mode):
    # Entering a `no_grad` block, the doctor looks at which locals require grad (AD155). Before
    # Python 3.13, a plain read of the frame's f_locals leaves a snapshot on the frame holding
    # every local's value until the frame ends, after the program has dropped it.
    with autograd_doctor.watch(mode=mode):
        w = torch.randn(3, requires_grad=True)
        with torch.no_grad():
            pass
        w_ref = weakref.ref(w)
        del w
        gc.collect()
        assert w_ref() is None


def test_untracked_writes_keep_no_tensor_alive_in_full_mode():
    # The full mode's rarer records: a write through `.data` into a saved tensor (a silent
    # write, with the values' fingerprint taken before it) and one beside a saved slice
    # (decided on elements). None of them may keep the tensors or the graph alive.
    with autograd_doctor.watch(mode="full", silent="ignore") as doctor:
        w = torch.randn(4, 6, requires_grad=True)
        buffer = torch.randn(4, 6)
        y = (w[:, :3] * buffer[:, :3]).sum()
        buffer.data[:, :3] += 1  # changes saved elements: a silent write, fingerprinted first
        buffer.data[:, 4] = 0.0  # beside the saved slice: no saved element changes
        records = (ref() for refs in doctor.recorder.saves_by_storage.values() for ref in refs)
        # The paths above were taken: a silent write recorded, the values fingerprinted before it.
        assert any(record is not None and record.silent_writes and record.content_before_write is not None
                   for record in records)
        buffer_ref, y_ref = weakref.ref(buffer), weakref.ref(y)
        del buffer, y, records
        gc.collect()
        assert buffer_ref() is None and y_ref() is None


@pytest.mark.internal_error  # the doctor made to fail on purpose
def test_internal_failure_leaves_pytorch_error_intact(tmp_path, monkeypatch):
    def broken(*args, **kwargs):
        raise ValueError("the doctor itself failed")

    monkeypatch.setattr(diagnose, "stale_saved_diagnosis", broken)
    monkeypatch.delenv("AUTOGRAD_DOCTOR_DEBUG", raising=False)
    outcome = run_program(tmp_path, """
        import torch
        x = torch.randn(3, requires_grad=True)
        y = torch.sigmoid(x)
        y[0] = 1.0
        y.sum().backward()
    """)
    assert type(outcome.error) is RuntimeError
    assert "modified by an inplace operation" in str(outcome.error)
    assert "is at version 1; expected version 0 instead" in str(outcome.error)
    assert not getattr(outcome.error, "__notes__", None)
    assert not isinstance(outcome.error.__context__, ValueError)


@pytest.mark.internal_error  # the doctor made to fail on purpose
def test_internal_failure_on_user_error_keeps_it_unchanged(tmp_path, monkeypatch):
    def broken(*args, **kwargs):
        raise ValueError("the doctor itself failed")

    monkeypatch.setattr(diagnose, "call_error_diagnosis", broken)
    monkeypatch.delenv("AUTOGRAD_DOCTOR_DEBUG", raising=False)
    with autograd_doctor.watch():
        w = torch.zeros(3, requires_grad=True)
        with pytest.raises(RuntimeError) as caught:
            w.add_(1)
    assert "leaf Variable that requires grad" in str(caught.value)
    assert not getattr(caught.value, "__notes__", None)


def test_unrelated_user_errors_pass_through_unchanged():
    with autograd_doctor.watch():
        a, b = torch.randn(3), torch.randn(4)
        with pytest.raises(RuntimeError) as caught:
            a.add_(b)
    assert "must match the size" in str(caught.value)
    assert autograd_doctor.diagnoses_of(caught.value) == []


def test_strict_mode_raises_at_backward_naming_the_write(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        x = torch.randn(3, requires_grad=True)
        y = torch.sigmoid(x)  # SAVE
        y[1] = 2.0  # WRITE
        y.sum().backward()  # BACKWARD
    """, strict=True)
    assert isinstance(outcome.error, RuntimeError)
    frames = [f for f in traceback.extract_tb(outcome.error.__traceback__) if f.filename == outcome.path]
    assert frames[-1].lineno == outcome.line("BACKWARD")  # decided at backward, before the engine
    assert not any(f.filename.startswith(os.path.dirname(torch.__file__))
                   for f in traceback.extract_tb(outcome.error.__traceback__))
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD101"
    assert diagnosis.primary.line == outcome.line("WRITE")
    assert isinstance(outcome.error, autograd_doctor.AutogradDoctorError)
    assert diagnosis.extra["node"] == "SigmoidBackward0" and diagnosis.extra["slot"] == "result"


def test_watch_is_a_decorator():
    @autograd_doctor.watch()
    def buggy():
        x = torch.randn(3, requires_grad=True)
        y = torch.exp(x)
        y.add_(1)
        y.sum().backward()

    with pytest.raises(RuntimeError) as caught:
        buggy()
    assert autograd_doctor.diagnoses_of(caught.value)[0].code == "AD101"


def test_install_and_uninstall():
    doctor = autograd_doctor.install()
    try:
        assert autograd_doctor.installed() is doctor
        x = torch.randn(3, requires_grad=True)
        y = torch.tanh(x)
        y.mul_(2)
        with pytest.raises(RuntimeError) as caught:
            y.sum().backward()
        assert autograd_doctor.diagnoses_of(caught.value)[0].code == "AD101"
    finally:
        autograd_doctor.uninstall()
    assert autograd_doctor.installed() is None


def test_invalid_options_are_rejected():
    with pytest.raises(ValueError):
        autograd_doctor.watch(silent="loud")
    with pytest.raises(ValueError):
        autograd_doctor.watch(capture="everything")


def test_data_write_into_saved_tensor_warns(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        x = torch.randn(3, requires_grad=True)
        y = torch.sigmoid(x)  # SAVE
        y.data[0] = 0.0  # WRITE
        y.sum().backward()  # BACKWARD
    """, mode="full")  # writes through .data into saved tensors: full mode only (it records saves)
    assert outcome.error is None  # PyTorch raises nothing: the gradient is silently wrong
    assert len(outcome.warnings) == 1
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD201" and diagnosis.severity == "warning"
    assert diagnosis.primary.line == outcome.line("WRITE")
    assert {loc.role: loc.line for loc in diagnosis.related}["saved"] == outcome.line("SAVE")


def test_data_write_raises_when_asked(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        x = torch.randn(3, requires_grad=True)
        y = torch.sigmoid(x)
        y.data[0] = 0.0
        y.sum().backward()
    """, silent="raise")
    assert isinstance(outcome.error, autograd_doctor.AutogradDoctorError)
    assert isinstance(outcome.error, RuntimeError)
    assert outcome.diagnosis.code == "AD201"


def test_torch_tensor_of_scalars_still_works_during_and_after_watch():
    """Wrapping must not change Tensor's type slots (e.g. make it look like a sequence)."""
    w = torch.ones(3, requires_grad=True)
    with autograd_doctor.watch():
        values = torch.tensor([(w * 2).sum().item(), (w * 3).sum().item()])
        during = torch.tensor([torch.tensor(1.0), torch.tensor(2.0)])
    after = torch.tensor([torch.tensor(1.0), torch.tensor(2.0)])
    assert torch.equal(during, after) and torch.equal(values, torch.tensor([6.0, 9.0]))


def test_torch_func_transforms_run_under_watch():
    """torch.func.grad/vjp/jacrev/hessian refuse saved-tensor hooks; the doctor steps aside."""
    from torch.func import grad, hessian, jacrev, vjp

    def f(x):
        return torch.sin(x).sum()

    x = torch.randn(3)
    plain = [grad(f)(x), jacrev(torch.sin)(x), hessian(f)(x), vjp(torch.sin, x)[1](torch.ones(3))[0]]
    with autograd_doctor.watch():
        watched = [grad(f)(x), jacrev(torch.sin)(x), hessian(f)(x), vjp(torch.sin, x)[1](torch.ones(3))[0]]
        # ... and is back on duty afterwards.
        y = torch.sigmoid(torch.randn(3, requires_grad=True))
        y[0] = 1.0
        with pytest.raises(RuntimeError) as caught:
            y.sum().backward()
    assert all(torch.equal(a, b) for a, b in zip(plain, watched))
    assert autograd_doctor.diagnoses_of(caught.value)[0].code == "AD101"


def test_checkpointing_and_user_hooks_still_work():
    from torch.utils.checkpoint import checkpoint

    torch.manual_seed(0)
    layer = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 1))
    x = torch.randn(3, 4, requires_grad=True)

    def run():
        layer.zero_grad()
        x.grad = None
        out = checkpoint(layer, x, use_reentrant=False).sum()
        with torch.autograd.graph.save_on_cpu():
            out = out + layer(x).sum()
        out.backward()
        return [p.grad.clone() for p in layer.parameters()] + [x.grad.clone()]

    plain = run()
    with autograd_doctor.watch():
        watched = run()
    assert all(torch.equal(a, b) for a, b in zip(plain, watched))


def test_failing_write_checks_never_break_the_users_write(monkeypatch):
    from autograd_doctor.recording import recorder as recorder_module

    def broken(*args, **kwargs):
        raise ValueError("the doctor itself failed")

    monkeypatch.setattr(recorder_module, "overlapping_operand", broken)
    monkeypatch.setattr(recorder_module.Recorder, "before_write", broken)
    with autograd_doctor.watch():
        a = torch.arange(6.0).reshape(2, 3)
        a.add_(a[:, :1].clone())
        a[0] = a[1]
        y = torch.sigmoid(torch.randn(3, requires_grad=True))
        y.detach().mul_(1.0)
    assert torch.equal(a[0], a[1])


def test_positional_retain_graph_is_understood(tmp_path):
    """backward(None, True): the recorder sees retain_graph even when passed by position."""
    with autograd_doctor.watch() as doctor:
        x = torch.randn(3, requires_grad=True)
        y = torch.sigmoid(x).sum()
        y.backward(None, True)
        y.backward()
    assert [call.retain_graph for call in doctor.recorder.backward_calls] == [True, False]


def test_forward_only_loop_keeps_bookkeeping_bounded():
    """Inference in grad mode (no backward, no in-place write) must not grow our lists."""
    from autograd_doctor.recording.recorder import MAX_PENDING

    model = nn.Linear(8, 8)
    with autograd_doctor.watch() as doctor:
        for _ in range(MAX_PENDING):  # two saves per call: twice the bound in total
            torch.tanh(model(torch.randn(2, 8)))
        assert len(doctor.recorder.pending) <= MAX_PENDING
        assert doctor.recorder.saves_by_storage == {}
