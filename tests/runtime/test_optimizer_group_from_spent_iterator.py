"""AD242: an optimizer parameter group built from an iterator that an earlier optimizer read to
the end (hyperIQA's solver rebuilds Adam every epoch from the same `filter(...)` object): the group
is empty, those parameters are never stepped again, and nothing fails. The line named is where the
iterator is made; the help makes it a list there (held-out set 22 part B, hyperIQA#32, silent and
undiagnosed on the first run)."""

import torch

from helpers import apply_help, run_plain, run_program

REBUILT = """
import torch
torch.manual_seed(0)
backbone = torch.nn.Linear(4, 8)
head = torch.nn.Linear(8, 1)
x, y = torch.randn(16, 4), torch.randn(16, 1)
head_ids = [id(p) for p in head.parameters()]
head_params = filter(lambda p: id(p) in head_ids, list(backbone.parameters()) + list(head.parameters()))  # MADE
lr = 0.1
optimizer = torch.optim.SGD([{"params": head_params, "lr": lr}, {"params": backbone.parameters(), "lr": lr}])  # FIRST
for epoch in range(3):
    for step in range(2):
        optimizer.zero_grad()
        loss = ((head(torch.relu(backbone(x))) - y) ** 2).mean()
        loss.backward()
        optimizer.step()
    lr = lr / 2
    optimizer = torch.optim.SGD([{"params": head_params, "lr": lr}, {"params": backbone.parameters(), "lr": lr}])  # AGAIN
params = [p.detach().clone() for p in list(backbone.parameters()) + list(head.parameters())]
"""

ANSWER = REBUILT.replace("head_params = filter(", "head_params = list(filter(").replace(
    "list(head.parameters()))  # MADE", "list(head.parameters())))  # MADE")


def test_the_iterator_is_named_where_it_is_made_and_made_a_list(tmp_path):
    outcome = run_program(tmp_path, REBUILT)
    assert outcome.error is None
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD242")
    assert diagnosis.primary.line == outcome.line("MADE")
    assert any(r.line == outcome.line("AGAIN") and "the group is empty" in r.note for r in diagnosis.related)
    assert any(r.line == outcome.line("FIRST") for r in diagnosis.related)
    assert diagnosis.help[0].replacement == (
        "head_params = list(filter(lambda p: id(p) in head_ids, list(backbone.parameters()) + list(head.parameters())))")


def test_the_help_applied_trains_as_the_answer_does(tmp_path):
    outcome = run_program(tmp_path, REBUILT)
    fixed = run_plain(tmp_path, apply_help(outcome, 0))["params"]
    answer = run_plain(tmp_path, ANSWER, name="answer.py")["params"]
    assert all(torch.equal(a, b) for a, b in zip(fixed, answer))
    buggy = run_plain(tmp_path, REBUILT, name="plain.py")["params"]
    assert not all(torch.equal(a, b) for a, b in zip(buggy, answer))  # the head stops training otherwise


def test_a_list_a_fresh_iterator_each_time_or_one_that_selects_nothing_is_silent(tmp_path):
    variants = [
        ANSWER,
        REBUILT.replace('{"params": head_params, "lr": lr}', '{"params": head.parameters(), "lr": lr}'),
        # a no-decay style group that selects nothing, built afresh each time: empty on purpose
        REBUILT.replace('{"params": head_params, "lr": lr}',
                        '{"params": filter(lambda p: p.ndim == 3, head.parameters()), "lr": lr}'),
    ]
    for source in variants:
        outcome = run_program(tmp_path, source)
        assert outcome.error is None
        assert not [d for d in outcome.diagnoses if d.code == "AD242"]
