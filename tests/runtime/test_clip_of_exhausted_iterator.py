"""AD208 for a clipping call given an iterator that an earlier loop read to the end (a
`model.parameters()` generator, a `filter(...)`): it clips nothing and the step applies the
gradients unclipped, without an error. The help makes the iterator a list where it is made
(held-out set 8, pytorch#148259, undiagnosed on the first run)."""

import torch

from helpers import apply_help, run_plain, run_program

FILTERED = """
import torch
torch.manual_seed(0)
model = torch.nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(8, 4), torch.randn(8, 2) * 30
trainable = filter(lambda p: p.requires_grad, model.parameters())  # MADE
print("trainable:", sum(p.numel() for p in trainable))
for step in range(3):
    loss = ((model(x) - y) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(trainable, 0.5)  # CLIP
    optimizer.step()
params = [p.detach().clone() for p in model.parameters()]
"""

ANSWER = FILTERED.replace("trainable = filter(lambda p: p.requires_grad, model.parameters())",
                          "trainable = list(filter(lambda p: p.requires_grad, model.parameters()))")


def test_the_iterator_is_named_where_it_is_made_and_made_a_list(tmp_path):
    outcome = run_program(tmp_path, FILTERED)
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD208")
    assert diagnosis.primary.line == outcome.line("MADE")
    assert any(r.line == outcome.line("CLIP") and "nothing left in it" in r.note for r in diagnosis.related)
    assert diagnosis.help[0].replacement == "trainable = list(filter(lambda p: p.requires_grad, model.parameters()))"


def test_the_help_applied_clips_as_the_answer_does(tmp_path):
    outcome = run_program(tmp_path, FILTERED)
    fixed = run_plain(tmp_path, apply_help(outcome, 0))["params"]
    answer = run_plain(tmp_path, ANSWER, name="answer.py")["params"]
    assert all(torch.equal(a, b) for a, b in zip(fixed, answer))
    unclipped = run_plain(tmp_path, FILTERED, name="plain.py")["params"]
    assert not all(torch.equal(a, b) for a, b in zip(unclipped, answer))  # the clipping matters here


def test_a_fresh_generator_or_a_list_at_each_call_is_silent(tmp_path):
    for argument in ("model.parameters()", "list(model.parameters())"):
        source = FILTERED.replace("torch.nn.utils.clip_grad_norm_(trainable, 0.5)",
                                  f"torch.nn.utils.clip_grad_norm_({argument}, 0.5)")
        outcome = run_program(tmp_path, source)
        assert outcome.error is None
        assert not [d for d in outcome.diagnoses if d.code == "AD208"]
