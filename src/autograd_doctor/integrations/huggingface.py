"""Hugging Face `Trainer`: `Trainer(..., callbacks=[AutogradDoctorCallback()])`.

Every training step (forward and backward of each micro-batch) runs under
`autograd_doctor.watch()`. When backward fails, the RuntimeError reaches you
unchanged from `trainer.train()`, with the doctor's report attached as a note (shown
in its traceback), and the `transformers.autograd_doctor` logger gets one line naming
the culprit. Problems PyTorch raises nothing for are logged there with their full
report, once per line of your code. Evaluation and prediction are not watched.
"""

from __future__ import annotations

import functools
import sys

try:
    from transformers import Trainer, TrainerCallback
    from transformers.utils import logging as transformers_logging
except ImportError as missing:
    raise ImportError("autograd-doctor's Hugging Face callback needs transformers: "
                      "pip install transformers accelerate") from missing

from autograd_doctor.recording.own_frames import hide_our_frames
from autograd_doctor.diagnosis.model import Diagnosis
from autograd_doctor.integrations.step_watch import StepWatch
from autograd_doctor.recording.frames import frame_locals

LOGGER_NAME = "transformers.autograd_doctor"

# How far up the call stack `on_train_begin` looks for the Trainer that called it.
TRAINER_SEARCH_DEPTH = 8


class AutogradDoctorCallback(TrainerCallback):
    """A `TrainerCallback`: every training step runs under `autograd_doctor.watch()`.

    Example::

        from transformers import Trainer
        from autograd_doctor.huggingface import AutogradDoctorCallback

        trainer = Trainer(model=model, args=args, train_dataset=data,
                          callbacks=[AutogradDoctorCallback()])
        trainer.train()   # a failing backward() names the line to change

    Options are those of `watch()`, e.g. `AutogradDoctorCallback(mode="full")`.
    `callback.diagnoses` lists what was reported.
    """

    def __init__(self, **watch_options):
        self.steps = StepWatch(transformers_logging.get_logger(LOGGER_NAME), watch_options)
        self._state = None
        self._wrapped_trainer = None

    @property
    def diagnoses(self) -> list[Diagnosis]:
        """Every diagnosis reported during training so far."""
        return self.steps.diagnoses

    def on_train_begin(self, args, state, control, **kwargs):
        self._state = state
        if args.world_size > 1:
            self.steps.prefix = f"[rank {args.process_index}] "
        # The Trainer has no event for a failed step, so a doctor started in on_step_begin
        # would stay on after a failure. Wrapping its training_step in a `with` block stops
        # the doctor however the step ends. Callbacks are not given the Trainer: the one
        # whose loop is calling us is on the stack.
        trainer = _calling_trainer()
        if trainer is not None:
            if not getattr(trainer.training_step, "_autograd_doctor_callback", None):
                trainer.training_step = self._watched(trainer.training_step)
            self._wrapped_trainer = trainer

    def on_train_end(self, args, state, control, **kwargs):
        trainer, self._wrapped_trainer = self._wrapped_trainer, None
        if trainer is not None and getattr(trainer.training_step, "_autograd_doctor_callback", None) is self:
            del trainer.training_step  # the class's own method again
        self.steps.end()

    # Without the Trainer (another loop driving TrainerCallbacks), the step events do it.
    def on_step_begin(self, args, state, control, **kwargs):
        if self._wrapped_trainer is None:
            self.steps.begin()

    def on_substep_end(self, args, state, control, **kwargs):
        if self._wrapped_trainer is None:
            self.steps.end(self._where())

    def on_step_end(self, args, state, control, **kwargs):
        if self._wrapped_trainer is None:
            self.steps.end(self._where())

    def _watched(self, training_step):
        @functools.wraps(training_step)
        def training_step_under_doctor(*args, **kwargs):
            self.steps.begin()
            try:
                loss = training_step(*args, **kwargs)
            except BaseException as error:
                self.steps.end(self._where(), error)
                # Our frames out of the traceback, this one's included: a bare `raise` adds
                # no entry for the frame that re-raises (Python 3.11 and later).
                hide_our_frames(error)
                raise
            self.steps.end(self._where())
            return loss

        training_step_under_doctor._autograd_doctor_callback = self
        return training_step_under_doctor

    def _where(self) -> str:
        if self._state is None:
            return ""
        return f"global step {self._state.global_step}"


def _calling_trainer() -> Trainer | None:
    frame = sys._getframe(2)
    for _ in range(TRAINER_SEARCH_DEPTH):
        if frame is None:
            return None
        candidate = frame_locals(frame).get("self")
        if isinstance(candidate, Trainer):
            return candidate
        frame = frame.f_back
    return None


__all__ = ["AutogradDoctorCallback", "LOGGER_NAME"]
