"""Set AJ's false finding (docs/lint.md, "A thirty-eighth held-out check: set AJ"): one
cause, now a link ADL001's graph evidence needs.  The programs are written for these
tests (not copied), in shapes other than the set's.

- ADL001, "graph": escnn's `_normalize(X: torch.Tensor)` divides `X` in place by
  `torch.norm(X, ...)` (https://github.com/QUVA-Lab/escnn,
  `escnn/group/groups/_numerical_thomson.py`).  Every call is under `torch.no_grad()`
  or, after the loop, on `X = best_X`, a detached copy.  The evidence that some call
  passes the helper a graph took every binding of the argument's name, so the first
  one, `X = torch.tensor(..., requires_grad=True)`, counted at the last call though
  `X` had been rebound on every path to it.  Now a latest binding that runs before the
  call on every path (a statement before it in the same block) is the only one that
  reaches it.  A rebinding on one branch only, or an augmented assignment (`h += 1`
  keeps the graph), leaves the earlier graph binding in, as before.
"""

from __future__ import annotations

import sys

import pytest
import torch

from autograd_doctor.lint.engine import Selection, lint_source

REBOUND_DETACHED = '''
import torch
from torch import nn


def unit_(v: torch.Tensor):
    v /= v.pow(2).sum().sqrt()


def train(data):
    model = nn.Linear(3, 3)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in data:
        h = model(x)
        loss = h.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        h = h.detach()
        unit_(h)
    return h
'''

REBOUND_UNDER_WITH = '''
import torch
from torch import nn


def standardise_(z: torch.Tensor) -> None:
    z /= torch.std(z, dim=0, keepdim=True)


def embed(x):
    enc = nn.Linear(4, 4)
    emb = enc(x)
    emb.sum().backward()
    with torch.no_grad():
        emb = emb * 1.0
    standardise_(emb)
    return emb
'''

PASSED_GRAPH = '''
import torch
from torch import nn


def unit_(v: torch.Tensor):
    v /= v.pow(2).sum().sqrt()


def train(data):
    model = nn.Linear(3, 3)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for x in data:
        h = model(x)
        unit_(h)
        loss = h.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model
'''

REBOUND_ON_ONE_BRANCH = '''
import torch
from torch import nn


def standardise_(z: torch.Tensor) -> None:
    z /= torch.std(z, dim=0, keepdim=True)


def embed(x, frozen):
    enc = nn.Linear(4, 4)
    emb = enc(x)
    if frozen:
        emb = emb.detach().clone()
    standardise_(emb)
    emb.sum().backward()
    return enc
'''

AUGMENTED_AFTER = '''
import torch
from torch import nn


def standardise_(z: torch.Tensor) -> None:
    z /= torch.std(z, dim=0, keepdim=True)


def embed(x):
    enc = nn.Linear(4, 4)
    emb = enc(x)
    emb = emb + 0.5
    emb += 1.0
    standardise_(emb)
    emb.sum().backward()
    return enc
'''


def found(source: str, code: str):
    return [f.line for f in lint_source(source, filename="<string>", selection=Selection(select=("ALL",)))
            if f.code == code]


def line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def load(source: str, name: str):
    module = type(sys)(name)
    exec(compile(source, name, "exec"), module.__dict__)
    return module


def test_a_graph_name_rebound_to_a_detached_copy_before_the_call_is_silent_and_runs():
    assert found(REBOUND_DETACHED, "ADL001") == []
    torch.manual_seed(0)
    out = load(REBOUND_DETACHED, "lib_set_aj_detached").train([torch.randn(2, 3) for _ in range(3)])
    assert out.grad_fn is None and torch.allclose(out.pow(2).sum(), torch.tensor(1.0))


def test_a_rebinding_under_no_grad_in_a_with_block_before_the_call_is_silent_and_runs():
    assert found(REBOUND_UNDER_WITH, "ADL001") == []
    out = load(REBOUND_UNDER_WITH, "lib_set_aj_with").embed(torch.randn(5, 4))
    assert out.grad_fn is None


@pytest.mark.parametrize("source, name, call, args", [
    (PASSED_GRAPH, "lib_set_aj_passed", "unit_(h)", ([torch.randn(2, 3)],)),
    (REBOUND_ON_ONE_BRANCH, "lib_set_aj_branch", "standardise_(emb)", (torch.randn(5, 4), False)),
    (AUGMENTED_AFTER, "lib_set_aj_aug", "standardise_(emb)", (torch.randn(5, 4),)),
])
def test_a_graph_reaching_the_call_is_still_found_and_torch_raises(source, name, call, args):
    helper_line = line_of(source, "z /=" if "standardise_" in call else "v /=")
    assert found(source, "ADL001") == [helper_line]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        getattr(load(source, name), "train" if "unit_" in call else "embed")(*args)


def test_the_help_applied_out_of_place_gives_the_hand_written_gradients():
    """The finding's help: do not overwrite what `torch.std` saved; the helper written
    out of place gives the gradients of the hand-written formula."""
    fixed = REBOUND_ON_ONE_BRANCH.replace(
        "    z /= torch.std(z, dim=0, keepdim=True)", "    return z / torch.std(z, dim=0, keepdim=True)").replace(
        "    standardise_(emb)", "    emb = standardise_(emb)")
    assert found(fixed, "ADL001") == []
    torch.manual_seed(0)
    x = torch.randn(5, 4)
    enc = load(fixed, "lib_set_aj_fixed").embed(x, False)
    by_hand = enc.weight.detach().clone().requires_grad_(True)
    h = x @ by_hand.T + enc.bias.detach()
    (h / h.std(dim=0, keepdim=True)).sum().backward()
    assert torch.allclose(enc.weight.grad, by_hand.grad, atol=1e-5)
