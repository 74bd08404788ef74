"""Set AD's false findings (docs/lint.md, "A thirty-second held-out check: set AD"): two links
that now need evidence.

- ADL001, "the saved tensor reaches the write": `alphas = F.relu(...)`, then `if mask is not
  None: alphas = alphas * mask`, then `mask = mask.squeeze(-1)` and a write into `alphas`. The
  path that skips the rebinding has `mask` None and raises at `mask.squeeze`, so the write
  always lands in the product, which no op saved (FunASR's CIF predictors;
  src/autograd_doctor/lint/none_paths.py). Without that later use of `mask`, or when the use sits in a `try:`
  that catches its error, the finding stays, and torch raises on that path.
- ADL017, "the value carries a graph": `self.weight_eps = torch.randn_like(self.weight_log_sigma)`
  in a Bayesian layer's `freeze()`. A `*_like` factory takes only the shape, dtype and device of
  its argument (torchbnn's layers). A buffer given a value computed from the parameter is still
  found.
"""

from __future__ import annotations

import sys

import pytest
import torch

from autograd_doctor.lint.engine import Selection, lint_source

PREDICTOR = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Predictor(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.proj = nn.Linear(dim, 1)

    def forward(self, hidden, mask=None, chunk_mask=None, target_length=None):
        alphas = F.relu(self.proj(hidden) - 0.1)
        if mask is not None:
            alphas = alphas * mask.unsqueeze(-1)
        if chunk_mask is not None:
            alphas = alphas * chunk_mask
        alphas = alphas.squeeze(-1)
        mask = mask.float()
        token_num = alphas.sum(-1)
        if target_length is not None:
            alphas *= (target_length / token_num)[:, None]  # WRITE
        return alphas, token_num
"""

# No later use of `mask`: the call without a mask reaches the write on the relu's output.
NO_LATER_USE = PREDICTOR.replace("        mask = mask.float()\n", "")

# The use of `mask` inside a `try:` that catches the error: the None path goes on to the write.
GUARDED_USE = PREDICTOR.replace(
    "        mask = mask.float()\n",
    "        try:\n            mask = mask.float()\n        except AttributeError:\n            mask = None\n")

BAYES = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class BayesLinear(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.weight_mu = nn.Parameter(torch.zeros(n, n))
        self.weight_log_sigma = nn.Parameter(torch.full((n, n), -3.0))
        self.register_buffer("weight_eps", None)

    def freeze(self):
        self.weight_eps = torch.randn_like(self.weight_log_sigma)  # FROZEN

    def forward(self, x):
        eps = torch.randn_like(self.weight_log_sigma) if self.weight_eps is None else self.weight_eps
        return F.linear(x, self.weight_mu + torch.exp(self.weight_log_sigma) * eps)
"""

# The buffer given the noise scaled by the parameter: it carries the parameter's graph.
BAYES_SCALED = BAYES.replace("self.weight_eps = torch.randn_like(self.weight_log_sigma)  # FROZEN",
                             "self.weight_eps = torch.randn_like(self.weight_log_sigma) * self.weight_log_sigma"
                             "  # FROZEN")


def found(source: str, code: str):
    return [f.line for f in lint_source(source, filename="<string>", selection=Selection(select=("ALL",)))
            if f.code == code]


def line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def load(source: str, name: str):
    module = type(sys)(name)
    exec(compile(source, name, "exec"), module.__dict__)
    return module


def test_a_write_whose_skipping_path_raises_earlier_is_silent_and_trains():
    assert found(PREDICTOR, "ADL001") == []
    torch.manual_seed(0)
    predictor = load(PREDICTOR, "set_ad_predictor").Predictor(4)
    hidden = torch.randn(2, 5, 4, requires_grad=True)
    alphas, _ = predictor(hidden, mask=torch.ones(2, 5), target_length=torch.tensor([2.0, 3.0]))
    alphas.sum().backward()  # the write lands in the product, which no op saved
    assert hidden.grad is not None
    with pytest.raises(AttributeError):
        predictor(hidden, target_length=torch.tensor([2.0, 3.0]))  # the skipping path


def test_without_the_later_use_the_write_is_found_and_raises():
    assert found(NO_LATER_USE, "ADL001") == [line_of(NO_LATER_USE, "# WRITE")]
    predictor = load(NO_LATER_USE, "set_ad_no_use").Predictor(4)
    alphas, _ = predictor(torch.randn(2, 5, 4), target_length=torch.tensor([2.0, 3.0]))
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        alphas.sum().backward()


def test_a_use_inside_a_try_keeps_the_finding_and_raises():
    assert found(GUARDED_USE, "ADL001") == [line_of(GUARDED_USE, "# WRITE")]
    predictor = load(GUARDED_USE, "set_ad_guarded").Predictor(4)
    alphas, _ = predictor(torch.randn(2, 5, 4), target_length=torch.tensor([2.0, 3.0]))
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        alphas.sum().backward()


def test_a_like_factory_of_a_parameter_kept_on_the_module_is_silent_and_trains_twice():
    assert found(BAYES, "ADL017") == []
    layer = load(BAYES, "set_ad_bayes").BayesLinear(3)
    layer.freeze()
    for _ in range(2):
        layer(torch.randn(2, 3)).sum().backward()  # no graph kept from one call to the next
    assert layer.weight_log_sigma.grad is not None


def test_a_buffer_computed_from_the_parameter_is_still_found_and_fails():
    assert found(BAYES_SCALED, "ADL017") == [line_of(BAYES_SCALED, "# FROZEN")]
    layer = load(BAYES_SCALED, "set_ad_bayes_scaled").BayesLinear(3)
    layer.freeze()
    layer(torch.randn(2, 3)).sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        layer(torch.randn(2, 3)).sum().backward()
