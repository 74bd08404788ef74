"""AD168 for the non-reentrant checkpoint too (`use_reentrant=False`, PyTorch's recommended form):
with `preserve_rng_state=False`, backward() recomputes the function with other random numbers than
its forward drew (set 18 part A's leftover: only the reentrant call was watched). torch's
`_checkpoint_without_reentrant_generator` is wrapped while a doctor runs, and only a call with
`preserve_rng_state=False` gets the generators' states compared around its forward.

Two programs written before the change was run on them: a transformer block's feed-forward with
dropout checkpointed with keyword arguments, and a diffusion denoiser whose checkpointed function
adds Gaussian noise (`torch.randn_like`) and whose input does not require grad (the parameters do)."""

import torch

from helpers import apply_help, run_plain, run_program

FEED_FORWARD_DROPOUT = """
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)
feed_forward = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Dropout(0.3), nn.Linear(16, 8))
norm = nn.LayerNorm(8)
optimizer = torch.optim.AdamW(list(feed_forward.parameters()) + list(norm.parameters()), lr=1e-2)
tokens, targets = torch.randn(5, 8), torch.randn(5, 8)
for step in range(3):
    optimizer.zero_grad()
    hidden = norm(tokens)
    hidden = hidden + checkpoint(feed_forward, hidden, use_reentrant=False, preserve_rng_state=False)  # CHECKPOINT
    loss = (hidden - targets).pow(2).mean()
    loss.backward()  # BACKWARD
    optimizer.step()
result = [p.detach().clone() for p in list(feed_forward.parameters()) + list(norm.parameters())]
"""

FEED_FORWARD_BY_HAND = FEED_FORWARD_DROPOUT.replace("preserve_rng_state=False", "preserve_rng_state=True")

NOISY_DENOISER = """
import torch
from torch import nn
import torch.utils.checkpoint as ckpt

torch.manual_seed(0)
denoiser = nn.Sequential(nn.Linear(4, 12), nn.SiLU(), nn.Linear(12, 4))


def noisy_denoise(x):
    return denoiser(x + 0.1 * torch.randn_like(x))


optimizer = torch.optim.SGD(denoiser.parameters(), lr=0.05)
clean = torch.randn(6, 4)
for step in range(3):
    optimizer.zero_grad()
    estimate = ckpt.checkpoint(noisy_denoise, clean, use_reentrant=False, preserve_rng_state=False)  # CHECKPOINT
    loss = (estimate - clean).abs().mean()
    loss.backward()
    optimizer.step()
result = [p.detach().clone() for p in denoiser.parameters()]
"""

DENOISER_BY_HAND = NOISY_DENOISER.replace("preserve_rng_state=False", "preserve_rng_state=True")


def _ad168(outcome):
    return next(d for d in outcome.diagnoses if d.code == "AD168")


def test_the_non_reentrant_checkpoint_is_named(tmp_path):
    outcome = run_program(tmp_path, FEED_FORWARD_DROPOUT)
    diagnosis = _ad168(outcome)
    assert diagnosis.primary.line == outcome.line("CHECKPOINT")
    assert any(r.line == outcome.line("BACKWARD") for r in diagnosis.related)
    assert any("checkpoint (use_reentrant=False) keeps none of its activations" in note for note in diagnosis.notes)
    assert "use_reentrant=False, preserve_rng_state=True" in diagnosis.help[0].replacement


def test_the_help_applied_trains_as_written_by_hand(tmp_path):
    for buggy, by_hand in ((FEED_FORWARD_DROPOUT, FEED_FORWARD_BY_HAND), (NOISY_DENOISER, DENOISER_BY_HAND)):
        outcome = run_program(tmp_path, buggy)
        assert _ad168(outcome).primary.line == outcome.line("CHECKPOINT")
        fixed = run_plain(tmp_path, apply_help(outcome))["result"]
        answer = run_plain(tmp_path, by_hand, "by_hand.py")["result"]
        assert all(torch.equal(a, b) for a, b in zip(fixed, answer))
        unreplayed = run_plain(tmp_path, buggy, "plain.py")["result"]
        assert not all(torch.equal(a, b) for a, b in zip(unreplayed, answer))  # the random numbers matter


def test_the_default_and_a_function_without_random_numbers_are_silent(tmp_path):
    for source in (FEED_FORWARD_BY_HAND, FEED_FORWARD_DROPOUT.replace("nn.Dropout(0.3)", "nn.Identity()"),
                   FEED_FORWARD_DROPOUT.replace("feed_forward.parameters()) + list(", "feed_forward.eval().parameters()) + list(")):
        outcome = run_program(tmp_path, source)
        assert outcome.error is None and not outcome.diagnoses
