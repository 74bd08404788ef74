"""AD301 at a distribution's sample() inside the module the loss goes through: Distribution.sample()
draws under torch.no_grad(), so a loss computed only from the draws has no grad_fn and backward()
raises. The cut statement is the call of the module (its inputs carry gradients, its result does
not); the report names the sample() in its forward and the help draws with rsample(), which trains
as the answer does (held-out set 11, deepdow#106's resampled Markowitz allocation)."""

import torch

from helpers import apply_help, run_plain, run_program

PREDICTOR = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)

class NoisyForecast(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(3, 2)
        self.log_std = nn.Parameter(torch.zeros(2))

    def forward(self, x):
        dist = torch.distributions.Normal(self.net(x), self.log_std.exp())
        draws = dist.sample((16,))  # SAMPLE
        return draws.mean(0)

model = NoisyForecast()
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
x, y = torch.randn(8, 3), torch.randn(8, 2)
for step in range(3):
    torch.manual_seed(step)
    prediction = model(x)  # CALL
    loss = F.mse_loss(prediction, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
params = [p.detach().clone() for p in model.parameters()]
"""

ANSWER = PREDICTOR.replace("dist.sample((16,))  # SAMPLE", "dist.rsample((16,))")


def test_the_sample_in_the_forward_is_named_with_rsample_as_the_help(tmp_path):
    outcome = run_program(tmp_path, PREDICTOR)
    assert isinstance(outcome.error, RuntimeError)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD301"
    assert diagnosis.primary.line == outcome.line("SAMPLE")
    assert "draws under torch.no_grad()" in diagnosis.primary.note
    assert any(loc.line == outcome.line("CALL") and "NoisyForecast.forward" in loc.note for loc in diagnosis.related)
    assert diagnosis.help[0].replacement.strip() == "draws = dist.rsample((16,))"


def test_the_help_applied_trains_as_the_answer_does(tmp_path):
    outcome = run_program(tmp_path, PREDICTOR)
    fixed = run_plain(tmp_path, apply_help(outcome, 0), name="fixed.py")["params"]
    answer = run_plain(tmp_path, ANSWER, name="answer.py")["params"]
    assert all(torch.equal(a, b) for a, b in zip(fixed, answer))


def test_the_answer_runs_without_a_diagnosis(tmp_path):
    outcome = run_program(tmp_path, ANSWER)
    assert outcome.error is None and not outcome.diagnoses


def test_a_wrapped_distribution_without_rsample_gets_no_rsample_help(tmp_path):
    # Independent's has_rsample is a property (the wrapped distribution's answer): the class alone
    # does not say rsample() exists, and here it does not (a Bernoulli has none).
    source = PREDICTOR.replace(
        "dist = torch.distributions.Normal(self.net(x), self.log_std.exp())",
        "dist = torch.distributions.Independent(torch.distributions.Bernoulli(logits=self.net(x)), 1)")
    outcome = run_program(tmp_path, source)
    assert isinstance(outcome.error, RuntimeError)
    assert outcome.diagnosis.code == "AD301"
    assert not any("rsample" in (suggestion.replacement or "") for suggestion in outcome.diagnosis.help)
