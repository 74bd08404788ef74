"""AD302 when the second loss is computed in a helper function from a tensor of the first loss's
graph (a regulariser on a network's features, backpropagated inside the helper right after the
main loss's backward()): no assignment carries the graph, and the only help is retain_graph=True
on the earlier backward(). That earlier call is the line to change, so it is the primary location;
the failing backward() inside the helper is shown next to it (held-out set 11,
pytorch_GAN_zoo#83: the GDPP loss's backward() after `lossGFake.backward()`)."""

import torch

from helpers import apply_help, run_plain, run_program

FEATURES = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(5, 8), nn.Tanh())
head = nn.Linear(8, 3)
optimizer = torch.optim.SGD([*encoder.parameters(), *head.parameters()], lr=0.1)
x, y = torch.randn(6, 5), torch.randint(0, 3, (6,))

def decorrelation_penalty(features):
    centred = features - features.mean(0)
    penalty = (centred.t() @ centred).triu(1).pow(2).sum()
    penalty.backward()  # SECOND
    return penalty.detach()

for step in range(2):
    optimizer.zero_grad()
    features = encoder(x)
    loss = F.cross_entropy(head(features), y)
    loss.backward()  # FIRST
    decorrelation_penalty(features)
    optimizer.step()
params = [p.detach().clone() for p in [*encoder.parameters(), *head.parameters()]]
"""

ANSWER = FEATURES.replace("    loss.backward()  # FIRST\n", "    loss.backward(retain_graph=True)\n")


def test_the_earlier_backward_is_the_line_to_change(tmp_path):
    outcome = run_program(tmp_path, FEATURES)
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD302")
    assert diagnosis.primary.line == outcome.line("FIRST")
    assert "freed the graph" in diagnosis.primary.note
    assert any(loc.line == outcome.line("SECOND") and "second backward()" in loc.note for loc in diagnosis.related)
    first = diagnosis.help[0]
    assert first.location.line == outcome.line("FIRST")
    assert first.replacement.strip() == "loss.backward(retain_graph=True)"


def test_the_help_applied_trains_as_the_answer_does(tmp_path):
    outcome = run_program(tmp_path, FEATURES)
    fixed = run_plain(tmp_path, apply_help(outcome, 0))["params"]
    answer = run_plain(tmp_path, ANSWER, name="answer.py")["params"]
    assert all(torch.equal(a, b) for a, b in zip(fixed, answer))
    plain_step = run_plain(tmp_path, FEATURES.replace("    decorrelation_penalty(features)\n", ""),
                           name="without_penalty.py")["params"]
    assert not all(torch.equal(a, b) for a, b in zip(answer, plain_step))  # the penalty trains too
