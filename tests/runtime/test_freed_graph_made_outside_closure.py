"""AD302 on a tensor with a graph made outside the function that calls backward() and read by
every call of it: an optimizer's closure (L-BFGS evaluates it several times per step) that uses
`logits` computed once before it. The help computes the tensor inside the function, and the
report does not offer retain_graph=True, which lets the program run on the first call's values
(held-out set 8, pytorch#111369, where retain_graph=True was the help and the fit was wrong)."""

import torch

from helpers import apply_help, run_plain, run_program

LOGISTIC = """
import torch
import torch.nn.functional as F
torch.manual_seed(0)
features = torch.randn(40, 3)
labels = (features[:, 0] > 0).float()
weights = torch.zeros(3, requires_grad=True)
optimizer = torch.optim.LBFGS([weights], lr=0.5, max_iter=4)
logits = features @ weights  # MADE
def closure():
    optimizer.zero_grad()
    loss = F.binary_cross_entropy_with_logits(logits, labels)  # USE
    loss.backward()  # BACKWARD
    return loss
for step in range(2):
    optimizer.step(closure)
params = [weights.detach().clone()]
"""

ANSWER = LOGISTIC.replace("logits = features @ weights  # MADE\n", "").replace(
    "    loss = F.binary_cross_entropy_with_logits(logits, labels)  # USE\n",
    "    logits = features @ weights\n    loss = F.binary_cross_entropy_with_logits(logits, labels)\n")


def test_the_tensor_made_outside_the_closure_is_named_and_computed_inside_it(tmp_path):
    outcome = run_program(tmp_path, LOGISTIC)
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD302")
    assert diagnosis.primary.line == outcome.line("MADE")
    assert "outside closure()" in diagnosis.primary.note
    assert any("previous call of closure()" in note for note in diagnosis.notes)
    assert not any("iteration of the loop" in note for note in diagnosis.notes)
    first = diagnosis.help[0]
    assert first.message.startswith("compute logits inside closure()")
    assert first.location.line == outcome.line("USE")
    assert first.replacement.splitlines()[0] == "logits = features @ weights"
    assert not any("retain_graph=True" in (s.replacement or "") for s in diagnosis.help)


def test_the_help_applied_fits_what_the_answer_fits(tmp_path):
    outcome = run_program(tmp_path, LOGISTIC)
    assert outcome.diagnosis.code == "AD302"
    fixed = run_plain(tmp_path, apply_help(outcome, 0))["params"]
    answer = run_plain(tmp_path, ANSWER, name="answer.py")["params"]
    assert all(torch.equal(a, b) for a, b in zip(fixed, answer))
    assert not torch.equal(answer[0], torch.zeros(3))  # the fit moved the weights
