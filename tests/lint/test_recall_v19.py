"""Causes of misses and false findings in the r476-r495 re-creations: the case now
reported really fails when run, its corrected twin (the change the finding asks
for, applied) stays silent and computes what a hand-written reference computes,
and similar correct shapes stay silent (and really run)."""

from __future__ import annotations

import textwrap

import pytest
import torch

from autograd_doctor.lint import lint_source


def _load(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "case.py", "exec"), namespace)
    return namespace


def _findings(source: str) -> list[tuple[int, str]]:
    return sorted((f.line, f.code) for f in lint_source(source, "case.py"))


def _swap(source: str, old: str, new: str) -> str:
    assert old in source, old
    return source.replace(old, new)


def _line(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


# ADL019 through a same-file function: a recurrent step written as a top-level
# function over a list of `nn.Parameter`s (`rnn(inputs, state, params)`, r493,
# Dive-into-DL's adjacent sampling), its state carried into the next minibatch
# without a detach.  The graph's evidence is the parameters handed to the helper
# (a list of `nn.Parameter`, or a same-file function returning an
# `nn.ParameterList`), and that the helper's returns are computed from them.
CARRIED = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    def get_params(n_in, n_hid, n_out):
        torch.manual_seed(0)
        return nn.ParameterList([nn.Parameter(torch.randn(n_in, n_hid) * 0.1),
                                 nn.Parameter(torch.randn(n_hid, n_hid) * 0.1),
                                 nn.Parameter(torch.randn(n_hid, n_out) * 0.1)])

    def rnn(inputs, state, params):
        W_xh, W_hh, W_hq = params
        H, = state
        outputs = []
        for X in inputs:
            H = torch.tanh(X @ W_xh + H @ W_hh)
            outputs.append(H @ W_hq)
        return outputs, (H,)

    def train(batches, n_class=5, n_hid=6, lr=0.1):
        params = get_params(n_class, n_hid, n_class)
        state = (torch.zeros(2, n_hid),)
        losses = []
        for X, Y in batches:
            inputs = [F.one_hot(X[:, i], n_class).float() for i in range(X.shape[1])]
            outputs, state = rnn(inputs, state, params)
            loss = F.cross_entropy(torch.cat(outputs), Y.t().reshape(-1))
            for p in params:
                p.grad = None
            loss.backward()
            with torch.no_grad():
                for p in params:
                    p -= lr * p.grad
            losses.append(loss.item())
        return losses, params
""")

# The book's loop: the state's tensors detached in place at the top of each minibatch.
CALL = "        outputs, state = rnn(inputs, state, params)\n"
CARRIED_FIXED = _swap(CARRIED, CALL, "        for s in state:\n            s.detach_()\n" + CALL)
# Random sampling: a fresh state for each minibatch.
CARRIED_FRESH = _swap(CARRIED, CALL, "        state = (torch.zeros(2, 6),)\n" + CALL)
# A tuple of detached tensors bound after the call.
CARRIED_DETACHED_AFTER = _swap(CARRIED, CALL, CALL + "        state = tuple(s.detach() for s in state)\n")
# The helper returns a detached state: nothing carried.
CARRIED_RETURNS_DETACHED = _swap(CARRIED, "    return outputs, (H,)\n", "    return outputs, (H.detach(),)\n")
# Plain tensors, not parameters, handed to the helper: no evidence of a graph (and
# none at run time: the loop has no backward, it only evaluates).
CARRIED_NO_PARAMETERS = _swap(_swap(_swap(
    CARRIED, "    return nn.ParameterList([", "    return list(["),
    "nn.Parameter(torch.randn(n_in, n_hid) * 0.1),", "torch.randn(n_in, n_hid) * 0.1,"),
    "        loss.backward()\n        with torch.no_grad():\n            for p in params:\n"
    "                p -= lr * p.grad\n", "")
CARRIED_NO_PARAMETERS = CARRIED_NO_PARAMETERS.replace("nn.Parameter(", "(")


# The state made by a same-file function returning a tuple (the book's
# `init_rnn_state`): the suggested detach keeps a tuple.
CARRIED_INIT_HELPER = _swap(_swap(
    CARRIED, "    state = (torch.zeros(2, n_hid),)\n", "    state = init_rnn_state(2, n_hid)\n"),
    "def train(", "def init_rnn_state(batch_size, n_hid):\n    return (torch.zeros((batch_size, n_hid)),)\n\n\ndef train(")


def _batches():
    torch.manual_seed(1)
    corpus = torch.randint(0, 5, (2, 13))
    return [(corpus[:, i:i + 4], corpus[:, i + 1:i + 5]) for i in range(0, 12, 4)]


def test_carried_state_of_a_parameter_helper_is_reported_at_the_backward():
    assert _findings(CARRIED) == [(_line(CARRIED, "loss.backward()"), "ADL019")]
    finding = lint_source(CARRIED, "case.py")[0]
    assert "`state`" in finding.message and "next iteration" in finding.message
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        _load(CARRIED)["train"](_batches())


def test_suggested_detach_keeps_the_tuple_a_helper_returns():
    (finding,) = lint_source(CARRIED_INIT_HELPER, "case.py")
    assert finding.code == "ADL019" and "`state = tuple(s.detach() for s in state)`" in finding.message
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        _load(CARRIED_INIT_HELPER)["train"](_batches())


def _reference(batches, n_class=5, n_hid=6, lr=0.1):
    """Truncated BPTT by hand: the state enters each minibatch as a constant."""
    params = [p.detach().clone().requires_grad_(True) for p in _load(CARRIED)["get_params"](n_class, n_hid, n_class)]
    H = torch.zeros(2, n_hid)
    losses = []
    for X, Y in batches:
        H = H.detach()
        outs = []
        for i in range(X.shape[1]):
            H = torch.tanh(torch.nn.functional.one_hot(X[:, i], n_class).float() @ params[0] + H @ params[1])
            outs.append(H @ params[2])
        loss = torch.nn.functional.cross_entropy(torch.cat(outs), Y.t().reshape(-1))
        grads = torch.autograd.grad(loss, params)
        with torch.no_grad():
            for p, g in zip(params, grads):
                p -= lr * g
        losses.append(loss.item())
    return losses, params


@pytest.mark.parametrize("fixed", [CARRIED_FIXED, CARRIED_FRESH, CARRIED_DETACHED_AFTER],
                         ids=["detach_-each-tensor", "fresh-state", "detached-tuple"])
def test_corrected_twins_are_silent_and_run(fixed):
    assert _findings(fixed) == []
    losses, params = _load(fixed)["train"](_batches())
    if fixed is not CARRIED_FRESH:  # the two fixes that keep the state across minibatches: truncated BPTT
        ref_losses, ref_params = _reference(_batches())
        assert losses == pytest.approx(ref_losses, abs=1e-6)
        for p, q in zip(params, ref_params):
            assert torch.allclose(p, q, atol=1e-6)


@pytest.mark.parametrize("source", [CARRIED_RETURNS_DETACHED, CARRIED_NO_PARAMETERS],
                         ids=["helper-returns-detached", "no-parameters"])
def test_similar_correct_shapes_stay_silent(source):
    assert _findings(source) == []
    _load(source)["train"](_batches())


# ADL001 precision: a same-file module whose forward writes its argument in place
# on one branch (`if self.activation_first: x = self.activation(x)`, an
# `inplace=True` activation) and returns something else than the written input
# on that branch (`x = self.conv(...)` rebinds it) keeps no output a caller could
# break; a caller's in-place write of its result is no hazard (r481, FUNIT's
# `Conv2dBlock`: the first run's false finding on `dx = self.conv_1(dx)`).  The
# write of the block's argument itself stays reported.
BLOCKS = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class Conv2dBlock(nn.Module):
        def __init__(self, cin, cout, activation_first=False):
            super().__init__()
            self.activation_first = activation_first
            self.conv = nn.Conv2d(cin, cout, 3, 1, 1)
            self.activation = nn.ReLU(inplace=True)

        def forward(self, x):
            if self.activation_first:
                x = self.activation(x)
                x = self.conv(x)
            else:
                x = self.conv(x)
                x = self.activation(x)
            return x

    class ResBlock(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.conv_0 = Conv2dBlock(c, c, activation_first=True)
            self.conv_1 = Conv2dBlock(c, c, activation_first=True)

        def forward(self, x):
            dx = self.conv_0(x.clone())
            dx = self.conv_1(dx)
            return x + dx

    def run():
        torch.manual_seed(0)
        block = nn.Sequential(nn.Conv2d(3, 4, 1), ResBlock(4))
        x = torch.randn(2, 3, 5, 5, requires_grad=True)
        block(x).sum().backward()
        return x.grad
""")

# The same module reduced to its in-place activation on every path: it returns
# the written input, which the activation keeps, so a caller's in-place write of
# the result breaks backward (still reported, and it fails).
BLOCKS_ACTIVATION_LAST = _swap(
    BLOCKS,
    "        if self.activation_first:\n            x = self.activation(x)\n            x = self.conv(x)\n"
    "        else:\n            x = self.conv(x)\n            x = self.activation(x)\n",
    "        x = self.activation(x)\n")


def test_branch_dependent_output_is_not_taken_as_kept():
    assert _findings(BLOCKS) == []
    grad = _load(BLOCKS)["run"]()
    assert grad is not None and torch.isfinite(grad).all()


def test_single_path_in_place_output_stays_reported():
    line = _line(BLOCKS_ACTIVATION_LAST, "dx = self.conv_1(dx)")
    assert _findings(BLOCKS_ACTIVATION_LAST) == [(line, "ADL001")]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _load(BLOCKS_ACTIVATION_LAST)["run"]()
