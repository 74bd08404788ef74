"""The Lightning callback with the real `lightning` Trainer on a tiny CPU model."""

from __future__ import annotations

import functools
import importlib.util
import inspect
import logging
import sys
import traceback
import warnings

import pytest

if importlib.util.find_spec("lightning") is None:
    pytest.skip("lightning is not installed", allow_module_level=True)
import torch  # noqa: E402
from torch.utils.data import DataLoader, TensorDataset  # noqa: E402

from autograd_doctor import diagnoses_of, watch  # noqa: E402

from programs import line_of  # noqa: E402

with open(__file__) as _source:
    THIS_SOURCE = _source.read()

# Writes through `.data` are seen where every save is recorded: the "full" mode, where the
# doctor has modes (before that, always).
FULL_MODE = {"mode": "full"} if "mode" in inspect.signature(watch).parameters else {}


def regressor_class(lightning_module):
    """The tiny model for one Lightning package (`lightning.pytorch` or `pytorch_lightning`)."""

    class TinyRegressor(lightning_module):
        """4 -> 8 -> 1; `bug` picks an autograd bug in the forward pass (None: a correct model)."""

        def __init__(self, bug: str | None = None):
            super().__init__()
            torch.manual_seed(0)
            self.hidden = torch.nn.Linear(4, 8)
            self.out = torch.nn.Linear(8, 1)
            self.bug = bug
            self.losses: list[torch.Tensor] = []

        def training_step(self, batch, batch_idx):
            inputs, targets = batch
            h = torch.sigmoid(self.hidden(inputs))
            if self.bug == "inplace":
                h[:, 0] = 0.5  # LIGHTNING-WRITE
            elif self.bug == "data":
                h.data[:, 0] = 0.5  # LIGHTNING-DATA-WRITE
            loss = torch.nn.functional.mse_loss(self.out(h), targets)
            self.losses.append(loss.detach().clone())
            return loss

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    return TinyRegressor


@functools.cache
def lightning_package():
    """lightning.pytorch, imported when a test first runs: it imports transformers and
    torch._dynamo, seconds that collecting the suite would otherwise pay."""
    import lightning.pytorch

    return lightning.pytorch


@functools.cache
def tiny_regressor_class():
    return regressor_class(lightning_package().LightningModule)


def tiny_regressor(bug: str | None = None):
    return tiny_regressor_class()(bug=bug)


def doctor_callback(**options):
    """Our callback for `lightning.pytorch` (importing it imports Lightning)."""
    from autograd_doctor.lightning import AutogradDoctor

    return AutogradDoctor(**options)


def batches():
    generator = torch.Generator().manual_seed(1)
    inputs = torch.randn(12, 4, generator=generator)
    targets = torch.randn(12, 1, generator=generator)
    return DataLoader(TensorDataset(inputs, targets), batch_size=4)


def fit(model, callbacks, tmp_path, lightning=None):
    lightning = lightning or lightning_package()
    trainer = lightning.Trainer(max_epochs=2, accelerator="cpu", devices=1, callbacks=callbacks, logger=False,
                        enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
                        default_root_dir=tmp_path)
    trainer.fit(model, batches())
    return trainer


class LogLines(logging.Handler):
    """The messages of one logger, whatever Lightning did to its propagation."""

    def __init__(self, name: str):
        super().__init__()
        self.messages: list[str] = []
        self.logger = logging.getLogger(name)

    def emit(self, record):
        self.messages.append(record.getMessage())

    def __enter__(self):
        self.logger.addHandler(self)
        return self

    def __exit__(self, *exc):
        self.logger.removeHandler(self)


def frames_of(error: BaseException) -> list[tuple[str, str, int]]:
    """(file, function, line) of every entry of an exception's traceback below the test's own line."""
    return [(frame.filename, frame.name, frame.lineno) for frame in traceback.extract_tb(error.__traceback__)[1:]]


def doctor_is_off() -> bool:
    """After training, an in-place bug gets PyTorch's plain error again, with nothing attached."""
    x = torch.ones(3, requires_grad=True)
    y = torch.sigmoid(x)
    y[0] = 0.0
    try:
        y.sum().backward()
    except RuntimeError as error:
        return diagnoses_of(error) == []
    return False


def test_inplace_bug_fails_as_without_the_callback_and_names_the_line(tmp_path):
    with pytest.raises(RuntimeError) as plain:
        fit(tiny_regressor(bug="inplace"), [], tmp_path)
    with LogLines("lightning.pytorch.autograd_doctor") as log, pytest.raises(RuntimeError) as watched:
        fit(tiny_regressor(bug="inplace"), [doctor_callback()], tmp_path)
    error = watched.value
    # The same error as without the doctor (the doctor words it as PyTorch does, naming the
    # saving node, because its own saved-tensor hooks replace PyTorch's version check).
    assert type(error) is type(plain.value)
    assert frames_of(error) == frames_of(plain.value)  # no frame of the doctor in the traceback
    assert error.args[0].split(":")[0] == plain.value.args[0].split(":")[0]
    diagnosis = diagnoses_of(error)[0]
    assert diagnosis.code == "AD101"
    assert diagnosis.primary is not None and diagnosis.primary.role == "modified", \
        "the write was not seen: Lightning runs training_step inside optimizer.step(closure)"
    assert diagnosis.primary.file == __file__
    assert diagnosis.primary.line == line_of(THIS_SOURCE, "LIGHTNING-WRITE")
    assert diagnosis.primary.source.strip().startswith("h[:, 0] = 0.5")
    assert any("h[:, 0] = 0.5" in note for note in error.__notes__)  # shown in the traceback
    site = f"{__file__}:{line_of(THIS_SOURCE, 'LIGHTNING-WRITE')}"
    assert log.messages == [f"autograd-doctor: error[AD101] at {site} in epoch 0 (global step 0): "
                            f"{diagnosis.title} (the full report is attached to the RuntimeError)"]
    assert doctor_is_off()


def test_correct_model_same_losses_bitwise_and_no_report(tmp_path):
    plain = tiny_regressor()
    fit(plain, [], tmp_path)
    watched = tiny_regressor()
    callback = doctor_callback()
    with LogLines("lightning.pytorch.autograd_doctor") as log:
        fit(watched, [callback], tmp_path)
    assert len(plain.losses) == 6
    assert torch.equal(torch.stack(plain.losses), torch.stack(watched.losses))
    for mine, theirs in zip(plain.parameters(), watched.parameters()):
        assert torch.equal(mine, theirs)
    assert log.messages == [] and callback.diagnoses == []
    assert doctor_is_off()


def test_silent_bug_is_logged_once_with_its_report_not_warned(tmp_path):
    callback = doctor_callback(**FULL_MODE)
    with LogLines("lightning.pytorch.autograd_doctor") as log, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit(tiny_regressor(bug="data"), [callback], tmp_path)  # 6 steps, one report
    assert [d.code for d in callback.diagnoses] == ["AD201"]
    assert len(log.messages) == 1
    site = f"{__file__}:{line_of(THIS_SOURCE, 'LIGHTNING-DATA-WRITE')}"
    assert log.messages[0].startswith(f"autograd-doctor: warning[AD201] at {site} in epoch 0, batch 0")
    assert "h.data[:, 0] = 0.5" in log.messages[0] and "help:" in log.messages[0]
    assert not [w for w in caught if "autograd" in type(w.message).__name__.lower()]


def test_strict_mode_stops_at_backward_naming_the_write(tmp_path):
    with pytest.raises(RuntimeError) as failure:
        fit(tiny_regressor(bug="inplace"), [doctor_callback(strict=True)], tmp_path)
    assert type(failure.value).__name__ == "AutogradDoctorError"
    assert diagnoses_of(failure.value)[0].primary.line == line_of(THIS_SOURCE, "LIGHTNING-WRITE")
    assert doctor_is_off()


def test_bad_option_is_a_clear_error_when_the_callback_is_made():
    with pytest.raises(ValueError, match="silent must be one of"):
        doctor_callback(silent="loud")


def test_pytorch_lightning_package_name(tmp_path):
    pl = pytest.importorskip("pytorch_lightning")
    from autograd_doctor.pytorch_lightning import AutogradDoctor as PLAutogradDoctor

    with LogLines("pytorch_lightning.autograd_doctor") as log, pytest.raises(RuntimeError) as failure:
        fit(regressor_class(pl.LightningModule)(bug="inplace"), [PLAutogradDoctor()], tmp_path, lightning=pl)
    assert diagnoses_of(failure.value)[0].primary.line == line_of(THIS_SOURCE, "LIGHTNING-WRITE")
    assert len(log.messages) == 1 and "error[AD101]" in log.messages[0]
    assert doctor_is_off()


def compiled_forward_regressor():
    class CompiledForwardRegressor(tiny_regressor_class()):
        """The bug in `forward`, which Lightning compiles when given `torch.compile(model)`."""

        def forward(self, inputs):
            h = torch.tanh(self.hidden(inputs))
            h.mul_(2.0)  # LIGHTNING-COMPILED-WRITE
            return self.out(h)

        def training_step(self, batch, batch_idx):
            inputs, targets = batch
            return torch.nn.functional.mse_loss(self(inputs), targets)

    return CompiledForwardRegressor()


def test_compiled_model_failure_is_explained_by_an_eager_run(tmp_path):
    torch._dynamo.reset()
    model = torch.compile(compiled_forward_regressor(), backend="aot_eager")
    with LogLines("lightning.pytorch.autograd_doctor") as log, \
            pytest.raises(torch._dynamo.exc.BackendCompilerFailed) as failure:
        fit(model, [doctor_callback()], tmp_path)
    torch._dynamo.reset()
    diagnosis = diagnoses_of(failure.value)[0]
    assert diagnosis.primary.line == line_of(THIS_SOURCE, "LIGHTNING-COMPILED-WRITE")
    assert len(log.messages) == 1 and "error[AD101]" in log.messages[0]
    assert doctor_is_off()


def test_without_the_package_a_one_line_import_error(monkeypatch):
    from autograd_doctor.lightning import callback_class

    monkeypatch.setitem(sys.modules, "pytorch_lightning", None)  # as if not installed
    with pytest.raises(ImportError, match="needs pytorch_lightning: pip install pytorch-lightning"):
        callback_class("pytorch_lightning")


def test_writes_inside_an_optimizer_step_closure_are_seen():
    """Lightning's automatic optimization runs forward and backward inside
    `optimizer.step(closure)`, as LBFGS does: the doctor must see the writes there too."""
    layer = torch.nn.Linear(4, 8)
    optimizer = torch.optim.SGD(layer.parameters(), lr=0.1)

    def closure():
        h = torch.sigmoid(layer(torch.ones(2, 4)))
        h[:, 0] = 0.5  # CLOSURE-WRITE
        loss = h.sum()
        loss.backward()
        return loss

    with watch(), pytest.raises(RuntimeError) as failure:
        optimizer.step(closure)
    primary = diagnoses_of(failure.value)[0].primary
    assert primary is not None and primary.line == line_of(THIS_SOURCE, "CLOSURE-WRITE")
    with watch(strict=True), pytest.raises(RuntimeError) as failure:
        optimizer.step(closure)
    assert type(failure.value).__name__ == "AutogradDoctorError"  # stopped at the write
