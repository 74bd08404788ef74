"""Recall on the causes of misses in the r140-r160 re-creations: each case the
linter now reports really fails (or, for a silent bug, shows it), its
corrected twin stays silent and computes what a reference computes, and a
similar correct pattern stays silent (and really runs)."""

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


# An LSTM's state unpacked as a nested tuple, `out, (h, c) = lstm(x, (h, c))`, is
# an output of the call like `out` is: carried into the next batch without
# `detach()`, the next backward goes back through the step's old weights.
LSTM_STATE_CARRIED = textwrap.dedent("""
    import torch
    import torch.nn as nn

    def train(batches):
        lstm = nn.LSTM(3, 4, batch_first=True)
        head = nn.Linear(4, 1)
        optimizer = torch.optim.SGD(list(lstm.parameters()) + list(head.parameters()), lr=0.1)
        h = torch.zeros(1, 2, 4)
        c = torch.zeros(1, 2, 4)
        for x, y in batches:
            out, (h, c) = lstm(x, (h, c))
            loss = ((head(out[:, -1]) - y) ** 2).mean()
            optimizer.zero_grad()
            loss.backward(retain_graph=True)
            optimizer.step()
        return lstm, head
    """)

LSTM_STATE_DETACHED = LSTM_STATE_CARRIED.replace(
    "out, (h, c) = lstm(x, (h, c))", "out, (h, c) = lstm(x, (h.detach(), c.detach()))")

# The state drawn afresh for every batch: nothing is carried.
LSTM_STATE_PER_BATCH = LSTM_STATE_CARRIED.replace(
    "out, (h, c) = lstm(x, (h, c))", "out, (h, c) = lstm(x, (torch.zeros(1, 2, 4), torch.zeros(1, 2, 4)))")


def _batches():
    torch.manual_seed(0)
    return [(torch.randn(2, 5, 3), torch.randn(2, 1)) for _ in range(3)]


def test_nested_tuple_state_carried_across_a_step_is_found():
    assert _findings(LSTM_STATE_CARRIED) == [(16, "ADL003")]
    with pytest.raises(RuntimeError, match="inplace operation"):
        _load(LSTM_STATE_CARRIED)["train"](_batches())


def test_nested_tuple_state_detached_is_silent_and_trains_like_truncated_bptt():
    assert _findings(LSTM_STATE_DETACHED) == []
    batches = _batches()
    torch.manual_seed(1)
    lstm, head = _load(LSTM_STATE_DETACHED)["train"](batches)
    # reference: the same loop written with the state detached by hand, same seed
    torch.manual_seed(1)
    ref_lstm = torch.nn.LSTM(3, 4, batch_first=True)
    ref_head = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(list(ref_lstm.parameters()) + list(ref_head.parameters()), lr=0.1)
    h, c = torch.zeros(1, 2, 4), torch.zeros(1, 2, 4)
    for x, y in batches:
        out, (h, c) = ref_lstm(x, (h.detach(), c.detach()))
        loss = ((ref_head(out[:, -1]) - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    for p, q in zip(lstm.parameters(), ref_lstm.parameters()):
        assert torch.equal(p, q)


def test_nested_tuple_state_made_per_batch_is_silent_and_runs():
    assert _findings(LSTM_STATE_PER_BATCH) == []
    _load(LSTM_STATE_PER_BATCH)["train"](_batches())
