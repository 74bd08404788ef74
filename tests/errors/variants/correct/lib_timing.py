# helper module of step_timer_class_turns_grad_off_on_enter.py (a held-out variant)
import time

import torch


class StepTimer:
    """Times the block it wraps."""

    def __enter__(self):
        self.grad_was_enabled = torch.is_grad_enabled()  # PRIMARY
        self.start = time.perf_counter()
        return self

    def __exit__(self, *problem):
        self.seconds = time.perf_counter() - self.start
        torch.set_grad_enabled(self.grad_was_enabled)
        return False
