"""The life of a check made at an optimizer's first two step() calls: candidates are noted at the
first step (weakly referenced), judged at the second, and the optimizer is never looked at again.
Gradients at one step may still be on their way (a parameter a later loss reaches), so a single
step decides nothing; two steps bound the cost to two looks per optimizer."""

from __future__ import annotations

import weakref

from autograd_doctor.diagnosis.model import Diagnosis


class CheckedAtSecondStep:
    """Per run: which optimizers are done and the candidates noted at each one's first step.
    A subclass says what a candidate is (`candidates`) and when one is a finding (`judge`)."""

    def __init__(self) -> None:
        self._pending: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._done: weakref.WeakSet = weakref.WeakSet()

    def at_step(self, optimizer, step_stack) -> Diagnosis | None:
        if optimizer in self._done:
            return None
        pending = self._pending.pop(optimizer, None)
        if pending is None:
            candidates = self.candidates(optimizer, step_stack)
            if candidates:
                self._pending[optimizer] = candidates
            else:
                self._done.add(optimizer)
            return None
        self._done.add(optimizer)
        return self.judge(optimizer, step_stack, pending)

    def candidates(self, optimizer, step_stack) -> list:
        raise NotImplementedError

    def judge(self, optimizer, step_stack, pending: list) -> Diagnosis | None:
        raise NotImplementedError
