"""AD226 is not said for a cross-entropy against learned soft targets.

AD226 is for a score-function (REINFORCE) term, `weight * log_prob(action)`: the log-probability
of the action taken, one entry of each distribution. The held-out variant
`tests/errors/variants/correct/one_hot_targets_given_requires_grad.py` learns soft labels (a leaf
started from the one-hot labels, in the model's optimizer) and multiplies their softmax with the
whole `log_softmax` of the model's scores: a cross-entropy with probability targets, correct, and
it drew AD226 in every mode. The fact taken without evidence was that any categorical
log-probability in a product is an action's; the doctor now asks for a gather or an index between
the normaliser and the product (`Categorical.log_prob` gathers, `log_probs[range(n), actions]`
indexes). This program is another one of the same form: a table of per-sample label logits,
learned with the classifier."""

import pytest
import torch

from helpers import run_plain, run_program

LEARNED_LABEL_TABLE = """
import torch
import torch.nn as nn
torch.manual_seed(0)
classifier = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 3))
x, labels = torch.randn(6, 5), torch.tensor([0, 2, 1, 1, 0, 2])
label_logits = nn.Parameter(4.0 * torch.eye(3)[labels])
optimizer = torch.optim.Adam([*classifier.parameters(), label_logits], lr=0.05)
for batch in (torch.tensor([0, 1, 2]), torch.tensor([3, 4, 5]), torch.tensor([0, 2, 4])):
    optimizer.zero_grad()
    targets = label_logits[batch].softmax(dim=-1)
    loss = -(targets * classifier(x[batch]).log_softmax(dim=-1)).sum(dim=-1).mean()
    loss.backward()
    optimizer.step()
result = [p.detach().clone() for p in [*classifier.parameters(), label_logits]]
"""

# The same training with PyTorch's cross-entropy against probability targets.
REFERENCE = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
classifier = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 3))
x, labels = torch.randn(6, 5), torch.tensor([0, 2, 1, 1, 0, 2])
label_logits = nn.Parameter(4.0 * torch.eye(3)[labels])
optimizer = torch.optim.Adam([*classifier.parameters(), label_logits], lr=0.05)
for batch in (torch.tensor([0, 1, 2]), torch.tensor([3, 4, 5]), torch.tensor([0, 2, 4])):
    optimizer.zero_grad()
    F.cross_entropy(classifier(x[batch]), label_logits[batch].softmax(dim=-1)).backward()
    optimizer.step()
result = [p.detach().clone() for p in [*classifier.parameters(), label_logits]]
"""

# The bug AD226 is for, the action's log-probability taken by indexing: the critic's values are
# not detached in the policy term, and one optimizer trains both.
ADVANTAGE_NOT_DETACHED = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)
actor, critic = nn.Linear(4, 3), nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
optimizer = torch.optim.SGD([*actor.parameters(), *critic.parameters()], lr=0.1)
for _ in range(3):
    states = torch.randn(8, 4)
    log_probs = F.log_softmax(actor(states), dim=-1)
    actions = torch.multinomial(log_probs.exp().detach(), 1).squeeze(1)
    returns = (actions == states[:, :3].argmax(dim=1)).float()
    values = critic(states).squeeze(-1)
    chosen = log_probs[torch.arange(8), actions]
    policy_loss = -((returns - values) * chosen).mean()  # PRIMARY
    optimizer.zero_grad()
    (policy_loss + F.mse_loss(values, returns)).backward()
    optimizer.step()
result = [p.detach().clone() for p in [*actor.parameters(), *critic.parameters()]]
"""

MODES = {"default": {}, "full": {"mode": "full"}, "strict": {"strict": True}}


def test_the_program_means_what_the_reference_computes(tmp_path):
    ours = run_plain(tmp_path, LEARNED_LABEL_TABLE)["result"]
    reference = run_plain(tmp_path, REFERENCE, name="reference.py")["result"]
    assert all(torch.allclose(a, b, rtol=1e-5, atol=1e-6) for a, b in zip(ours, reference))


@pytest.mark.parametrize("mode", sorted(MODES))
def test_learned_soft_targets_are_silent_in_every_mode(tmp_path, mode):
    outcome = run_program(tmp_path, LEARNED_LABEL_TABLE, **MODES[mode])
    assert outcome.error is None
    assert outcome.diagnoses == []
    assert outcome.warnings == []
    plain = run_plain(tmp_path, LEARNED_LABEL_TABLE, name="plain.py")["result"]
    assert all(torch.equal(a, b) for a, b in zip(outcome.namespace["result"], plain))


@pytest.mark.parametrize("mode", sorted(MODES))
def test_an_indexed_action_log_probability_is_still_found(tmp_path, mode):
    outcome = run_program(tmp_path, ADVANTAGE_NOT_DETACHED, **MODES[mode])
    if mode == "strict":  # strict mode raises the warning as an error at the backward()
        found = [outcome.error.diagnosis]
    else:
        assert outcome.error is None
        found = outcome.diagnoses
    (diagnosis,) = [d for d in found if d.code == "AD226"]
    assert diagnosis.primary.line == outcome.line("PRIMARY")
    assert "values.detach()" in str(diagnosis)
