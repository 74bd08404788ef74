"""A finding on a line Python never runs (after an unconditional raise, return, continue or
break in the same block) is dropped, whatever the rule: set AR's debatable ADL021, a dropped
`masked_fill` kept below `raise NotImplementedError`."""

import textwrap

import torch

from autograd_doctor.lint.engine import lint_source


def codes(source: str) -> list[tuple[str, int]]:
    return [(f.code, f.line) for f in lint_source(textwrap.dedent(source)) if f.code != "ADL000"]


ATTENTION = """\
import torch
from torch import nn


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x, mask):
        scores = self.proj(x) @ x.transpose(-1, -2)
        {stop}
        scores.masked_fill(mask, float("-inf"))
        return scores.softmax(-1)
"""


def test_a_dropped_result_below_raise_is_silent():
    assert codes(ATTENTION.format(stop='raise NotImplementedError("use the fused kernel")')) == []


def test_the_same_line_without_the_raise_is_found():
    assert ("ADL021", 13) in codes(ATTENTION.format(stop="pass"))


def test_a_raise_inside_a_branch_does_not_end_the_outer_block():
    source = ATTENTION.format(stop='if mask is None:\n            raise ValueError("mask needed")')
    assert ("ADL021", 14) in codes(source)


def test_after_continue_in_a_loop_is_silent_and_before_it_found():
    loop = """\
    import torch

    w = torch.randn(3, requires_grad=True)
    for step in range(3):
        y = torch.sigmoid(w)
        {first}
        {second}
        y.sum().backward()
    """
    write = "y += 1"
    assert codes(loop.format(first="continue", second=write)) == []
    assert [code for code, _ in codes(loop.format(first=write, second="pass"))] == ["ADL001"]


def test_the_write_found_before_the_continue_really_fails():
    w = torch.randn(3, requires_grad=True)
    y = torch.sigmoid(w)
    y += 1
    try:
        y.sum().backward()
    except RuntimeError as error:
        assert "modified by an inplace operation" in str(error)
    else:
        raise AssertionError("backward through a sigmoid whose output was written should fail")
