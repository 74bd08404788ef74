"""The Hugging Face callback with the real `transformers.Trainer` on a tiny CPU model (no downloads)."""

from __future__ import annotations

import functools
import importlib.util
import os
from types import SimpleNamespace

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
if importlib.util.find_spec("transformers") is None or importlib.util.find_spec("accelerate") is None:
    pytest.skip("transformers and accelerate are not installed", allow_module_level=True)
import torch  # noqa: E402

from autograd_doctor import diagnoses_of  # noqa: E402

from programs import line_of  # noqa: E402
from test_lightning import FULL_MODE, LogLines, doctor_is_off, frames_of  # noqa: E402

with open(__file__) as _source:
    THIS_SOURCE = _source.read()


@functools.cache
def hf() -> SimpleNamespace:
    """transformers, our callback and the tiny model's classes, imported when a test first
    runs: importing transformers takes seconds that collecting the suite would pay."""
    import transformers

    from autograd_doctor.huggingface import LOGGER_NAME, AutogradDoctorCallback

    class TinyConfig(transformers.PretrainedConfig):
        model_type = "autograd-doctor-tiny"

        def __init__(self, bug: str | None = None, **kwargs):
            super().__init__(**kwargs)
            self.bug = bug

    class TinyModel(transformers.PreTrainedModel):
        """4 -> 8 -> 1 regression; `config.bug` picks an autograd bug (None: a correct model)."""

        config_class = TinyConfig

        def __init__(self, config):
            super().__init__(config)
            self.hidden = torch.nn.Linear(4, 8)
            self.out = torch.nn.Linear(8, 1)
            self.losses: list[torch.Tensor] = []

        def forward(self, features, labels=None):
            h = torch.sigmoid(self.hidden(features))
            if self.config.bug == "inplace":
                h[:, 0] = 0.5  # HF-WRITE
            elif self.config.bug == "data":
                h.data[:, 0] = 0.5  # HF-DATA-WRITE
            prediction = self.out(h)
            loss = torch.nn.functional.mse_loss(prediction, labels)
            self.losses.append(loss.detach().clone())
            return {"loss": loss, "logits": prediction}

    return SimpleNamespace(transformers=transformers, TinyConfig=TinyConfig, TinyModel=TinyModel,
                           LOGGER_NAME=LOGGER_NAME, AutogradDoctorCallback=AutogradDoctorCallback)


def tiny_model(bug=None):
    torch.manual_seed(0)
    return hf().TinyModel(hf().TinyConfig(bug=bug))


class Examples(torch.utils.data.Dataset):
    def __init__(self):
        generator = torch.Generator().manual_seed(1)
        self.features = torch.randn(12, 4, generator=generator)
        self.labels = torch.randn(12, 1, generator=generator)

    def __len__(self):
        return len(self.features)

    def __getitem__(self, index):
        return {"features": self.features[index], "labels": self.labels[index]}


def train(model, callbacks, tmp_path):
    args = hf().transformers.TrainingArguments(
        output_dir=str(tmp_path), per_device_train_batch_size=4, num_train_epochs=2, learning_rate=0.1,
        optim="sgd", seed=0, save_strategy="no", report_to=[], use_cpu=True, disable_tqdm=True,
        logging_strategy="no", dataloader_num_workers=0)
    trainer = hf().transformers.Trainer(model=model, args=args, train_dataset=Examples(), callbacks=callbacks)
    trainer.train()
    return trainer


def test_inplace_bug_fails_as_without_the_callback_and_names_the_line(tmp_path):
    with pytest.raises(RuntimeError) as plain:
        train(tiny_model(bug="inplace"), [], tmp_path)
    callback = hf().AutogradDoctorCallback()
    with LogLines(hf().LOGGER_NAME) as log, pytest.raises(RuntimeError) as watched:
        train(tiny_model(bug="inplace"), [callback], tmp_path)
    error = watched.value
    assert type(error) is type(plain.value)
    assert frames_of(error) == frames_of(plain.value)  # no frame of the doctor in the traceback
    assert error.args[0].split(":")[0] == plain.value.args[0].split(":")[0]
    diagnosis = diagnoses_of(error)[0]
    assert diagnosis.code == "AD101"
    assert diagnosis.primary.file == __file__
    assert diagnosis.primary.line == line_of(THIS_SOURCE, "HF-WRITE")
    assert any("h[:, 0] = 0.5" in note for note in error.__notes__)  # shown in the traceback
    site = f"{__file__}:{line_of(THIS_SOURCE, 'HF-WRITE')}"
    assert log.messages == [f"autograd-doctor: error[AD101] at {site} in global step 0: "
                            f"{diagnosis.title} (the full report is attached to the RuntimeError)"]
    assert callback.diagnoses == [diagnosis]
    assert doctor_is_off()  # no failure event in the Trainer, and still nothing left running


def test_correct_model_same_losses_bitwise_and_no_report(tmp_path):
    plain = tiny_model()
    train(plain, [], tmp_path)
    watched = tiny_model()
    callback = hf().AutogradDoctorCallback()
    with LogLines(hf().LOGGER_NAME) as log:
        trainer = train(watched, [callback], tmp_path)
    assert len(plain.losses) == 6
    assert torch.equal(torch.stack(plain.losses), torch.stack(watched.losses))
    for mine, theirs in zip(plain.parameters(), watched.parameters()):
        assert torch.equal(mine, theirs)
    assert log.messages == [] and callback.diagnoses == []
    assert "training_step" not in vars(trainer)  # the Trainer's own method again
    assert doctor_is_off()


def test_silent_bug_is_logged_once_with_its_report(tmp_path):
    callback = hf().AutogradDoctorCallback(**FULL_MODE)
    with LogLines(hf().LOGGER_NAME) as log:
        train(tiny_model(bug="data"), [callback], tmp_path)  # 6 steps, one report
    assert [d.code for d in callback.diagnoses] == ["AD201"]
    site = f"{__file__}:{line_of(THIS_SOURCE, 'HF-DATA-WRITE')}"
    assert len(log.messages) == 1
    assert log.messages[0].startswith(f"autograd-doctor: warning[AD201] at {site} in global step 0:")
    assert "h.data[:, 0] = 0.5" in log.messages[0] and "help:" in log.messages[0]



def test_compiled_model_failure_is_explained_by_an_eager_run(tmp_path):
    """TrainingArguments(torch_compile=True): the in-place bug fails while compiling."""
    torch._dynamo.reset()
    args = hf().transformers.TrainingArguments(
        output_dir=str(tmp_path), per_device_train_batch_size=4, num_train_epochs=1, save_strategy="no",
        report_to=[], use_cpu=True, disable_tqdm=True, logging_strategy="no",
        torch_compile=True, torch_compile_backend="aot_eager")
    trainer = hf().transformers.Trainer(model=tiny_model(bug="inplace"), args=args, train_dataset=Examples(),
                                        callbacks=[hf().AutogradDoctorCallback()])
    with LogLines(hf().LOGGER_NAME) as log, pytest.raises(torch._dynamo.exc.BackendCompilerFailed) as failure:
        trainer.train()
    torch._dynamo.reset()
    diagnosis = diagnoses_of(failure.value)[0]
    assert diagnosis.primary.line == line_of(THIS_SOURCE, "HF-WRITE")
    assert "torch.compile failed while tracing the backward" in "\n".join(failure.value.__notes__)
    assert len(log.messages) == 1 and "error[AD101]" in log.messages[0]


def test_without_a_trainer_on_the_stack_the_step_events_drive_the_doctor(tmp_path):
    """Another loop that calls TrainerCallback events itself: on_step_begin/on_step_end."""
    args = hf().transformers.TrainingArguments(output_dir=str(tmp_path), use_cpu=True, report_to=[])
    state, control = hf().transformers.TrainerState(), hf().transformers.TrainerControl()
    callback = hf().AutogradDoctorCallback(**FULL_MODE)
    callback.on_train_begin(args, state, control)
    model = tiny_model(bug="data")
    with LogLines(hf().LOGGER_NAME) as log:
        for step in range(2):
            callback.on_step_begin(args, state, control)
            batch = Examples()[0:4]
            model(**batch)["loss"].backward()
            callback.on_step_end(args, state, control)
            state.global_step += 1
    callback.on_train_end(args, state, control)
    assert [d.code for d in callback.diagnoses] == ["AD201"] and len(log.messages) == 1
    assert doctor_is_off()
