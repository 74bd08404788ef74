"""A module fits a grid of positions: `__init__` makes them with
`torch.linspace(..., requires_grad=True)` and reshapes them in the same
expression, `.view(2, 4, 2, 2)`.  The stored tensor is the view, not the
leaf: after `backward()` its `.grad` is None, and the hand-written update
`self.positions - lr * self.positions.grad` raises a TypeError.  The report
read `lhs_pos.grad` after `lhs_pos = lhs_pos.view(...)`.  The fix reshapes
before turning on `requires_grad` (or keeps the leaf and views it in forward).
Buggy line: `self.positions.grad` in `PositionField.step`.
Source: https://github.com/pytorch/pytorch/issues/32708"""
import torch


class PositionField:
    def __init__(self):
        self.positions = torch.linspace(1, 32, steps=32, requires_grad=True, dtype=torch.float).view(2, 4, 2, 2)

    def energy(self, target):
        return ((self.positions - target) ** 2).sum()

    def step(self, target, lr=0.01):
        self.energy(target).backward()
        with torch.no_grad():
            self.positions = self.positions - lr * self.positions.grad  # expect: ADL020
        return self.positions


def run():
    PositionField().step(torch.zeros(2, 4, 2, 2))
