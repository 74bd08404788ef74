"""A program file rewritten and run again in the same process is read as its new text.

`linecache` keeps the lines of a file it read and never looks at the file again unless someone
calls `checkcache` (printing a traceback does). A test looping over programs written to one path,
or `%run` after an edit, had its second program judged on the first one's lines (an empty source
line, no help), or on the right ones when a traceback happened to be printed in between: the
report depended on what ran before it."""

import torch

from helpers import apply_help, run_plain, run_program

FIRST = """
import torch
a = torch.ones(3, requires_grad=True)
b = a.sigmoid()
b[1] = 2  # WRITE
b.sum().backward()
"""

# The same file, rewritten: other lines, another write.
SECOND = """
import torch
# the data
x = torch.linspace(-1, 1, 3)
a = torch.ones(3, requires_grad=True)
b = a.sigmoid()
b.mul_(x)  # WRITE
b.sum().backward()
grad = a.grad
"""


def test_the_second_program_at_one_path_gets_its_own_lines_and_help(tmp_path):
    first = run_program(tmp_path, FIRST)
    assert first.diagnosis.code == "AD101" and first.diagnosis.primary.line == first.line("WRITE")
    second = run_program(tmp_path, SECOND)  # same file name: program.py
    diagnosis = second.diagnosis
    assert diagnosis.code == "AD101"
    assert diagnosis.primary.line == second.line("WRITE")
    assert diagnosis.primary.source.strip() == "b.mul_(x)  # WRITE"
    assert diagnosis.help[0].replacement == "b = b.mul(x)"
    fixed = run_plain(tmp_path, apply_help(second))
    a = torch.ones(3, requires_grad=True)
    (a.sigmoid() * torch.linspace(-1, 1, 3)).sum().backward()  # the oracle: the write made out of place
    assert torch.equal(fixed["grad"], a.grad)
