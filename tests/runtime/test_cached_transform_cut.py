"""AD301 for torch.autograd.grad with respect to a tensor that a torch.distributions transform
built with `cache_size=1` produced (set 18's pyro#2292: the score of a flow's own samples): the
transform's construction is named and the change, building it without the cache, gives the
hand-written version's values. A cut elsewhere keeps AD301's usual report."""

import torch

from helpers import apply_help, run_as_script, run_plain

PROGRAM = """
import torch
import torch.nn.functional as F
from torch.distributions import Normal, TransformedDistribution
from torch.distributions.transforms import AffineTransform, ExpTransform
torch.manual_seed(0)

flow = TransformedDistribution(Normal(torch.zeros(2), torch.ones(2)),
                               [AffineTransform(torch.tensor([0.2, -0.1]), torch.tensor([0.7, 0.4])), EXP])  # FLOW
weights = torch.zeros(2, requires_grad=True)
optimizer = torch.optim.SGD([weights], lr=0.1)
losses = []
for step in range(3):
    samples = flow.sample((16,))
    samples.requires_grad_(True)
    score = torch.autograd.grad(flow.log_prob(samples).sum(), samples)[0]  # GRAD
    loss = F.mse_loss(samples.detach() * weights, score)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": torch.stack(losses), "weights": weights.detach().clone()}
"""


def test_a_score_through_a_caching_exp_transform_names_the_transform_and_drops_the_cache(tmp_path):
    outcome = run_as_script(tmp_path, PROGRAM.replace("EXP", "ExpTransform(cache_size=1)"))
    assert "does not require grad" in str(outcome.error)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD301"
    assert diagnosis.primary.line == outcome.line("FLOW") - 1  # the statement starts a line above
    assert "cache_size=1" in diagnosis.primary.note
    assert any(location.line == outcome.line("GRAD") for location in diagnosis.related)
    assert "ExpTransform()])" in diagnosis.help[0].replacement
    fixed = run_plain(tmp_path, apply_help(outcome))["result"]
    reference = run_plain(tmp_path, PROGRAM.replace("EXP", "ExpTransform()"), "reference.py")["result"]
    assert torch.equal(fixed["losses"], reference["losses"])
    assert torch.equal(fixed["weights"], reference["weights"])


def test_without_the_cache_the_score_runs_silently(tmp_path):
    namespace = run_plain(tmp_path, PROGRAM.replace("EXP", "ExpTransform()"), "plain.py")
    assert namespace["result"]["losses"].shape == (3,)


def test_a_cut_elsewhere_keeps_the_usual_report(tmp_path):
    outcome = run_as_script(tmp_path, PROGRAM.replace("EXP", "ExpTransform(cache_size=1)").replace(
        "flow.log_prob(samples).sum()", "flow.log_prob(samples.detach().clone()).sum()"))
    assert "does not require grad" in str(outcome.error)
    assert all("cache_size" not in (d.primary.note or "") for d in outcome.diagnoses)
