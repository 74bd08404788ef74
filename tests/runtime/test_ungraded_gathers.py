"""AD162: features with a graph gathered with `torch.distributed.all_gather`, a loss computed from
the gathered buffers only, so the encoder that computed them never gets a gradient (set 16's
DuoduoCLIP contrastive loss). One process with the gloo backend stands for several."""

from __future__ import annotations

import torch

from helpers import apply_help, run_plain, run_program

GATHERED_WITHOUT_GRAPH = """
    import os
    import tempfile

    import torch
    import torch.distributed as dist
    from torch import nn

    store = tempfile.NamedTemporaryFile(delete=False).name
    dist.init_process_group("gloo", init_method="file://" + store, rank=0, world_size=1)
    try:
        torch.manual_seed(0)
        encoder = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 4))
        prototypes = nn.Parameter(torch.randn(3, 4))
        optimizer = torch.optim.SGD([*encoder.parameters(), prototypes], lr=0.5)
        x, labels = torch.randn(10, 6), torch.randint(0, 3, (10,))
        losses = []
        for step in range(3):
            features = encoder(x)
            gathered = [torch.zeros_like(features) for _ in range(dist.get_world_size())]
            dist.all_gather(gathered, features)  # GATHER
            everyone = torch.cat(gathered)
            loss = nn.functional.cross_entropy(everyone @ prototypes.t(), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()  # STEP
            losses.append(loss.detach())
        result = [torch.stack(losses), *[p.detach().clone() for p in encoder.parameters()], prototypes.detach().clone()]
    finally:
        dist.destroy_process_group()
        if os.path.exists(store):
            os.remove(store)
"""

# The hand-written version: this process's features, with their graph, in its own place.
INTENDED = GATHERED_WITHOUT_GRAPH.replace(
    "            dist.all_gather(gathered, features)  # GATHER\n",
    "            dist.all_gather(gathered, features)\n            gathered[dist.get_rank()] = features\n")

# Gathered for a metric under no_grad, the loss on the local features: nothing is cut.
GATHERED_FOR_A_METRIC = GATHERED_WITHOUT_GRAPH.replace(
    "            dist.all_gather(gathered, features)  # GATHER\n            everyone = torch.cat(gathered)\n",
    "            with torch.no_grad():\n                dist.all_gather(gathered, features)\n"
    "            spread = torch.cat(gathered).std()\n            everyone = features\n")

# Gathered with a graph, but the loss also reads the local features: the encoder trains.
GATHERED_NEXT_TO_A_LOCAL_TERM = GATHERED_WITHOUT_GRAPH.replace(
    "loss = nn.functional.cross_entropy(everyone @ prototypes.t(), labels)",
    "loss = nn.functional.cross_entropy(everyone @ prototypes.t(), labels) + features.pow(2).mean()")


def test_the_gather_is_named_with_the_line_that_puts_the_features_back(tmp_path):
    outcome = run_program(tmp_path, GATHERED_WITHOUT_GRAPH)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD162"]
    assert diagnosis.primary.line == outcome.line("GATHER")
    assert outcome.line("STEP") in [location.line for location in diagnosis.related]
    assert diagnosis.help[0].replacement == \
        "dist.all_gather(gathered, features)  # GATHER"[:-len("  # GATHER")] + "\ngathered[dist.get_rank()] = features"
    assert not [d for d in outcome.diagnoses if d.code == "AD214"]


def test_the_help_applied_trains_the_encoder_as_intended(tmp_path):
    outcome = run_program(tmp_path, GATHERED_WITHOUT_GRAPH)
    outcome.diagnoses = [d for d in outcome.diagnoses if d.code == "AD162"]
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    intended = run_plain(tmp_path, INTENDED, "intended.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["result"], intended["result"]))
    original = run_plain(tmp_path, GATHERED_WITHOUT_GRAPH, "original.py")
    assert not torch.equal(original["result"][1], fixed["result"][1])  # the encoder trains now


def test_the_intended_version_is_silent(tmp_path):
    outcome = run_program(tmp_path, INTENDED)
    assert outcome.error is None
    assert not outcome.diagnoses


def test_a_gather_for_a_metric_under_no_grad_is_silent(tmp_path):
    outcome = run_program(tmp_path, GATHERED_FOR_A_METRIC)
    assert outcome.error is None
    assert not outcome.diagnoses


def test_a_gather_beside_a_loss_term_that_trains_the_encoder_is_silent(tmp_path):
    outcome = run_program(tmp_path, GATHERED_NEXT_TO_A_LOCAL_TERM)
    assert outcome.error is None
    assert not outcome.diagnoses
