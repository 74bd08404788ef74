"""A compiled training step with an in-place bug: torch.compile fails while compiling, with
no line of this file in its message; autograd_doctor.compiled.compile explains it.

    python examples/compiled_step.py
"""

import torch

import autograd_doctor.compiled


def step(inputs, weight):
    h = torch.sigmoid(inputs @ weight)
    h[:, 0] = 0.0  # BUG: sigmoid saved h for backward
    return h.sum()


if __name__ == "__main__":
    compiled_step = autograd_doctor.compiled.compile(step)  # instead of torch.compile(step)
    inputs, weight = torch.randn(8, 4), torch.randn(4, 4, requires_grad=True)
    compiled_step(inputs, weight).backward()
