"""The doctor around one training step at a time, reporting to a training framework's logger.

The PyTorch Lightning and Hugging Face callbacks both use this: a framework calls
`begin()` when a step starts and `end()` when it finishes or fails. Each step runs
under its own `watch()`; what it finds is logged once per line of user code, so a bug
in every step is reported once, not once per step.

Problems PyTorch raises nothing for (silent problems) go to the logger instead of
Python warnings: a framework's log is where its users look. A failure's full report
is attached to the user's exception as a note (its traceback shows it); the logger
gets one line pointing at it, so the report is not printed twice.
"""

from __future__ import annotations

import contextlib
import logging
import warnings

from autograd_doctor.integrations.compiled import explain_from_traceback, is_compile_failure
from autograd_doctor.doctor import AutogradDoctorWarning, diagnoses_of, internal_error, watch
from autograd_doctor.diagnosis.model import Diagnosis
from autograd_doctor.report.text import render_diagnosis


def site_of(diagnosis: Diagnosis) -> str:
    """`file:line` of the line to change, or '' when the diagnosis has none."""
    primary = diagnosis.primary
    return f"{primary.file}:{primary.line}" if primary is not None else ""


class StepWatch:
    """One `watch()` per training step; new diagnoses are logged once per site.

    Example::

        >>> import logging, torch
        >>> steps = StepWatch(logging.getLogger("example"), {})
        >>> steps.begin()
        >>> x = torch.ones(2, requires_grad=True)
        >>> (x * 2).sum().backward()
        >>> steps.end("step 0")
        >>> steps.diagnoses
        []
    """

    def __init__(self, logger: logging.Logger, watch_options: dict, prefix: str = ""):
        watch(**watch_options)  # a bad option fails here, when the callback is created
        self.logger = logger
        self.watch_options = dict(watch_options)
        self.prefix = prefix  # e.g. "[rank 1] " when several processes share one log
        self.diagnoses: list[Diagnosis] = []  # everything reported so far, in order
        self._reported: set[tuple] = set()
        self._step: contextlib.ExitStack | None = None
        self._doctor = None

    @property
    def active(self) -> bool:
        return self._step is not None

    def begin(self) -> None:
        """Start watching a step (ends a step that never ended: some frameworks have no failure event)."""
        if self._step is not None:
            self.end()
        step = contextlib.ExitStack()
        try:
            # The logger reports silent problems; the same report as a Python warning would repeat it.
            step.enter_context(warnings.catch_warnings())
            warnings.filterwarnings("ignore", category=AutogradDoctorWarning)
            self._doctor = step.enter_context(watch(**self.watch_options))
        except Exception:
            step.close()
            self._doctor = None
            internal_error()
            return
        self._step = step

    def end(self, where: str = "", error: BaseException | None = None) -> None:
        """Stop watching; log what this step found (`where` names the step, `error` is its failure)."""
        step, doctor = self._step, self._doctor
        self._step = self._doctor = None
        if step is None:
            return
        with contextlib.suppress(Exception):
            step.close()
        if error is not None:
            explain_from_traceback(error)  # a torch.compile failure: explained by an eager run
        try:
            self._log(doctor, where, error)
        except Exception:
            internal_error()

    def _log(self, doctor, where: str, error: BaseException | None) -> None:
        attached = diagnoses_of(error) if error is not None else []
        found = attached + [d for d in doctor.diagnoses if d not in attached]
        if error is not None and is_compile_failure(error):
            # The step's doctor also saw the compiler's own backward trace fail, without the
            # user's line; the eager run's report, attached to the error, is the one to log.
            found = attached
        in_step = f" in {where}" if where else ""
        for diagnosis in found:
            key = (diagnosis.code, site_of(diagnosis))
            if key in self._reported:
                continue
            self._reported.add(key)
            self.diagnoses.append(diagnosis)
            headline = f"{self.prefix}autograd-doctor: {diagnosis.severity}[{diagnosis.code}]"
            if site_of(diagnosis):
                headline += f" at {site_of(diagnosis)}"
            if diagnosis in attached:
                self.logger.error("%s%s: %s (the full report is attached to the %s)",
                                  headline, in_step, diagnosis.title, type(error).__name__)
            else:
                self.logger.warning("%s%s:\n%s", headline, in_step, render_diagnosis(diagnosis))


__all__ = ["StepWatch", "site_of"]
