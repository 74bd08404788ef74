"""AD301's help for a term computed inside a `with torch.no_grad():` block that was meant for
another value (set 15's detector distillation computed the student's feature hint inside the
teacher's block): the statement moves to just after the block when nothing later in the block
reads what it binds, and the program then trains as the intended one. Where a later statement
of the block reads it, moving could change what runs: the help stays advice."""

from __future__ import annotations

import torch

from helpers import apply_help, run_plain, run_program

HINT_INSIDE_TEACHER_BLOCK = """
    import torch
    from torch import nn
    import torch.nn.functional as F

    torch.manual_seed(0)
    student, teacher, adapter = nn.Linear(4, 3), nn.Linear(4, 6), nn.Linear(3, 6)
    optimizer = torch.optim.SGD([*student.parameters(), *adapter.parameters()], lr=0.1)
    x, y = torch.randn(8, 4), torch.randn(8, 3)
    for step in range(3):
        optimizer.zero_grad()
        features = student(x)
        with torch.no_grad():  # BLOCK
            target = teacher(x)
            hint = adapter(features)  # HINT
        loss = F.mse_loss(features, y) + F.mse_loss(hint, target)
        loss.backward()
        optimizer.step()
    result = [p.detach().clone() for p in [*student.parameters(), *adapter.parameters()]]
"""

INTENDED = HINT_INSIDE_TEACHER_BLOCK.replace("""            target = teacher(x)
            hint = adapter(features)  # HINT""", """            target = teacher(x)
        hint = adapter(features)  # HINT""")


def test_the_statement_is_named_and_the_help_moves_it_after_the_block(tmp_path):
    outcome = run_program(tmp_path, HINT_INSIDE_TEACHER_BLOCK)
    assert outcome.error is None
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD301")
    assert diagnosis.primary.line == outcome.line("HINT")
    help_ = diagnosis.help[0]
    assert help_.location.line == outcome.line("BLOCK")
    assert help_.replacement == ("with torch.no_grad():  # BLOCK\n    target = teacher(x)\n"
                                 "hint = adapter(features)  # HINT")


def test_the_help_applied_trains_like_the_intended_program(tmp_path):
    outcome = run_program(tmp_path, HINT_INSIDE_TEACHER_BLOCK)
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    intended = run_plain(tmp_path, INTENDED, "intended.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["result"], intended["result"]))


def test_a_statement_read_later_in_the_block_keeps_the_advice(tmp_path):
    outcome = run_program(tmp_path, HINT_INSIDE_TEACHER_BLOCK.replace(
        "            hint = adapter(features)  # HINT",
        "            hint = adapter(features)  # HINT\n            target = target + 0 * hint"))
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD301")
    assert diagnosis.help[0].replacement is None
