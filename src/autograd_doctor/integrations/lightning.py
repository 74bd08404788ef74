"""PyTorch Lightning: `Trainer(callbacks=[AutogradDoctor()])`.

Every training batch (forward, backward and optimizer step, or your own
`manual_backward` calls) runs under `autograd_doctor.watch()`. When backward fails,
Lightning calls `on_exception` and re-raises: the RuntimeError reaches you unchanged,
with the doctor's report attached as a note (shown in its traceback), and the
`lightning.pytorch.autograd_doctor` logger gets one line naming the culprit. Problems
PyTorch raises nothing for are logged there with their full report, once per line of
your code. Validation and prediction are not watched: they build no graph to check.

This module is for the `lightning` package; `autograd_doctor.pytorch_lightning` has
the same callback for the older `pytorch_lightning` package.
"""

from __future__ import annotations

import importlib
import logging

from autograd_doctor.recording.own_frames import hide_our_frames
from autograd_doctor.diagnosis.model import Diagnosis
from autograd_doctor.integrations.step_watch import StepWatch


class DoctorCallbackHooks:
    """The callback's hooks, shared by the `lightning` and `pytorch_lightning` classes."""

    logger_package = "lightning.pytorch"

    def __init__(self, **watch_options):
        """Options as for `autograd_doctor.watch()` (e.g. mode="full", strict=True); silent
        problems are logged (silent="warn") or raised (silent="raise"), never printed as
        Python warnings."""
        super().__init__()
        self.steps = StepWatch(logging.getLogger(f"{self.logger_package}.autograd_doctor"), watch_options)

    @property
    def diagnoses(self) -> list[Diagnosis]:
        """Every diagnosis reported during training so far."""
        return self.steps.diagnoses

    def setup(self, trainer, pl_module, stage: str) -> None:
        if trainer.world_size > 1:
            self.steps.prefix = f"[rank {trainer.global_rank}] "

    def on_train_batch_start(self, trainer, pl_module, batch, batch_idx: int) -> None:
        self.steps.begin()

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx: int) -> None:
        self.steps.end(_where(trainer, batch_idx))

    def on_exception(self, trainer, pl_module, exception: BaseException) -> None:
        # Lightning calls this, then re-raises the exception itself: nothing to re-raise here.
        self.steps.end(_where(trainer, None), exception)
        hide_our_frames(exception)  # the traceback Lightning re-raises is the one without the doctor

    def teardown(self, trainer, pl_module, stage: str) -> None:
        self.steps.end()  # a run stopped between batch start and end (e.g. should_stop)


def _where(trainer, batch_idx: int | None) -> str:
    where = f"epoch {trainer.current_epoch}"
    if batch_idx is not None:
        where += f", batch {batch_idx}"
    return where + f" (global step {trainer.global_step})"


def callback_class(package: str) -> type:
    """The AutogradDoctor callback class for `package` ("lightning.pytorch" or "pytorch_lightning")."""
    try:
        callback_base = importlib.import_module(package).Callback
    except ImportError as missing:
        raise ImportError(f"autograd-doctor's Lightning callback needs {package.split('.')[0]}: "
                          f"pip install {package.split('.')[0].replace('_', '-')}") from missing
    # Named after the path users import it from (autograd_doctor.lightning), as before the move.
    namespace = {"__doc__": AUTOGRAD_DOCTOR_DOC, "__module__": "autograd_doctor.lightning", "logger_package": package}
    return type("AutogradDoctor", (DoctorCallbackHooks, callback_base), namespace)


AUTOGRAD_DOCTOR_DOC = """A Lightning `Callback`: every training batch runs under `autograd_doctor.watch()`.

    Example::

        import lightning.pytorch as L
        from autograd_doctor.lightning import AutogradDoctor

        trainer = L.Trainer(max_epochs=1, callbacks=[AutogradDoctor()])
        trainer.fit(model, data)   # a failing backward() names the line to change

    Options are those of `watch()`, e.g. `AutogradDoctor(mode="full")`.
    `callback.diagnoses` lists what was reported.
    """


def __getattr__(name: str):
    # Built on first use, so that autograd_doctor.pytorch_lightning works without `lightning`.
    if name != "AutogradDoctor":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    callback = callback_class("lightning.pytorch")
    globals()[name] = callback
    return callback


# AutogradDoctor is public too; it is built by __getattr__ above.
__all__ = ["callback_class", "DoctorCallbackHooks"]
