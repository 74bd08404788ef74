"""The doctor's two modes: how much it records while the program runs.

- `Mode.LIGHT` (the default, a few percent of a training step): no saved-tensor hooks; the
  writes are logged, and a failure is explained from PyTorch's own version check. It finds
  the write and the tensor, not the line that saved it.
- `Mode.FULL`: every save is recorded (saved-tensor hooks), so a report also names the line
  that saved the tensor; strict=True, verify_saved=True, silent="raise" and capture="mode"
  need it.

A `Mode` is a `str` ("light", "full"), so `watch(mode="full")` and the environment variable
`AUTOGRAD_DOCTOR_MODE` take the plain words.
"""

from __future__ import annotations

import enum


class Mode(str, enum.Enum):
    LIGHT = "light"
    FULL = "full"

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    @classmethod
    def parse(cls, value: str | Mode) -> Mode:
        """The mode named `value`; ValueError for any other word."""
        try:
            return cls(value)
        except ValueError:
            raise ValueError(f"mode must be one of {tuple(m.value for m in cls)}, not {value!r}") from None


# Set to "full" (or "light") to choose the mode of every doctor in the process, e.g. when
# `autograd-doctor run` re-runs a program to find the line where a tensor was saved.
MODE_VARIABLE = "AUTOGRAD_DOCTOR_MODE"
