"""AD226 where the log-probability is the log of a softmax's probabilities: `Categorical(probs=...)`
(which takes the log of the normalised, clamped probabilities) or `torch.log(probs.gather(...))`,
and where the products are appended to a list per sample before the loss stacks them. Held-out set
19, ucla-rlcourse/RLexample#12 (an actor-critic whose advantage `reward - value` was not detached;
undiagnosed on the first run: only `log_softmax` and `logsumexp` counted as log-probabilities). The
two programs here are other shapes of the same cause, written before the check was run on them: a
recommendation bandit's REINFORCE with a learned baseline head, and a token-level text generator
whose per-token terms `dist.log_prob(token) * (score - value)` are appended to a list."""

import pytest
import torch

from autograd_doctor.analysis.fixes import apply_replacement
from helpers import run_plain, run_program

BANDIT = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)


class Recommender(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(8, 16)
        self.scores = nn.Linear(16, 5)
        self.baseline = nn.Linear(16, 1)

    def forward(self, users):
        hidden = torch.tanh(self.body(users))
        return F.softmax(self.scores(hidden), dim=1), self.baseline(hidden).squeeze(1)


model = Recommender()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
for round_ in range(3):
    users = torch.randn(16, 8)
    probs, expected = model(users)
    items = torch.multinomial(probs.detach(), 1)
    clicks = (items.squeeze(1) % 2).float()
    chosen = torch.log(probs.gather(1, items)).squeeze(1)
    loss = -(chosen * (clicks - expected)).mean() + F.mse_loss(expected, clicks)  # WEIGHT
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
params = [p.detach().clone() for p in model.parameters()]
"""

BANDIT_ANSWER = BANDIT.replace("(chosen * (clicks - expected))", "(chosen * (clicks - expected.detach()))")

GENERATOR = """
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical
torch.manual_seed(0)
VOCAB = 7
embed, cell = nn.Embedding(VOCAB, 12), nn.GRUCell(12, 12)
to_vocab, critic = nn.Linear(12, VOCAB), nn.Linear(12, 1)
parameters = [*embed.parameters(), *cell.parameters(), *to_vocab.parameters(), *critic.parameters()]
optimizer = torch.optim.SGD(parameters, lr=0.05)


def train_sentence():
    state, token = torch.zeros(1, 12), torch.tensor([0])
    terms, value_losses = [], []
    for position in range(6):
        state = cell(embed(token), state)
        dist = Categorical(probs=F.softmax(to_vocab(state), dim=-1))
        token = dist.sample()
        score = (token == 3).float()
        value = critic(state).squeeze(1)
        terms.append(-dist.log_prob(token) * (score - value))  # WEIGHT
        value_losses.append((score - value) ** 2)
    loss = torch.stack(terms).sum() + torch.stack(value_losses).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


for sentence in range(3):
    train_sentence()
params = [p.detach().clone() for p in parameters]
"""

GENERATOR_ANSWER = GENERATOR.replace("* (score - value))  # WEIGHT", "* (score - value.detach()))  # WEIGHT")

CASES = {"a bandit's log(probs.gather(...))": (BANDIT, BANDIT_ANSWER, "expected"),
         "a generator's Categorical(probs=...) terms in a list": (GENERATOR, GENERATOR_ANSWER, "value")}


@pytest.mark.parametrize("name", list(CASES))
def test_the_product_is_named_and_the_baseline_detached(tmp_path, name):
    source, _answer, baseline = CASES[name]
    outcome = run_program(tmp_path, source)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD226"]
    assert diagnosis.primary.line == outcome.line("WEIGHT")
    assert diagnosis.primary.note.startswith(f"{baseline} carries the critic's graph")
    assert diagnosis.help[0].message.startswith(f"detach the baseline in the policy-gradient term: {baseline}.detach()")
    assert f"{baseline}.detach()" in diagnosis.help[0].replacement


@pytest.mark.parametrize("name", list(CASES))
def test_the_help_applied_trains_as_the_answer_does(tmp_path, name):
    source, answer_source, _baseline = CASES[name]
    outcome = run_program(tmp_path, source)
    help_ = next(d for d in outcome.diagnoses if d.code == "AD226").help[0]
    fixed = run_plain(tmp_path, apply_replacement(outcome.source, help_.location, help_.replacement))["params"]
    answer = run_plain(tmp_path, answer_source, name="answer.py")["params"]
    assert all(torch.equal(a, b) for a, b in zip(fixed, answer))
    buggy = run_plain(tmp_path, source, name="plain.py")["params"]
    assert not all(torch.equal(a, b) for a, b in zip(buggy, answer))


SILENT = {
    "the bandit's answer": BANDIT_ANSWER,
    "the generator's answer": GENERATOR_ANSWER,
    "an entropy bonus of the same probabilities": BANDIT.replace(
        "loss = -(chosen * (clicks - expected)).mean()",
        "loss = -(chosen * (clicks - expected.detach())).mean() + 0.01 * (probs * torch.log(probs)).sum(1).mean()"),
    "soft targets from a learned head times the log of the probabilities": BANDIT.replace(
        "loss = -(chosen * (clicks - expected)).mean()",
        "loss = -(F.softmax(model.baseline.weight @ model.baseline.weight.t() * probs, 1) * torch.log(probs)).sum(1).mean()"),
    "a critic on detached states with its own optimizer, cleared before its loss": GENERATOR.replace(
        "parameters = [*embed.parameters(), *cell.parameters(), *to_vocab.parameters(), *critic.parameters()]\n"
        "optimizer = torch.optim.SGD(parameters, lr=0.05)\n",
        "parameters = [*embed.parameters(), *cell.parameters(), *to_vocab.parameters()]\n"
        "optimizer = torch.optim.SGD(parameters, lr=0.05)\n"
        "critic_optimizer = torch.optim.SGD(critic.parameters(), lr=0.05)\n").replace(
        "value = critic(state).squeeze(1)", "value = critic(state.detach()).squeeze(1)").replace(
        "    loss = torch.stack(terms).sum() + torch.stack(value_losses).sum()\n    optimizer.zero_grad()\n"
        "    loss.backward()\n    optimizer.step()\n",
        "    optimizer.zero_grad()\n    torch.stack(terms).sum().backward(retain_graph=True)\n"
        "    critic_optimizer.zero_grad()\n    torch.stack(value_losses).sum().backward()\n"
        "    optimizer.step()\n    critic_optimizer.step()\n"),
}


@pytest.mark.parametrize("name", list(SILENT))
def test_nearby_correct_forms_are_silent(tmp_path, name):
    outcome = run_program(tmp_path, SILENT[name])
    assert outcome.error is None, name
    assert not [d for d in outcome.diagnoses if d.code == "AD226"], name
