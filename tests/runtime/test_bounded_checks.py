"""The default mode's checks that look only at the first few backward() calls end with them:
nothing of theirs runs in the steps after (the overhead benchmark's "steady" steps start at the
fifth), and what they share to stay cheap gives the same answers as doing the work each time."""

from __future__ import annotations

import torch
from torch import nn

import autograd_doctor
from autograd_doctor.analysis import gradient_path, masked_nan, source_scope
from autograd_doctor.recording import module_forwards


def _training_step():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(6, 4), torch.randn(6, 2)

    def step():
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()

    return step


def test_the_module_tracker_stops_after_the_last_examined_backward():
    step = _training_step()
    forwards_seen = []
    with autograd_doctor.watch() as doctor:
        for _ in range(gradient_path.CHECKED_BACKWARDS):
            step()
        tracker = doctor.recorder.state.get(module_forwards.STATE_KEY)
        # A hook of our own counts the module calls that still reach global forward hooks.
        handle = nn.modules.module.register_module_forward_hook(lambda *args: forwards_seen.append(1))
        try:
            step()
        finally:
            handle.remove()
    assert tracker is None
    assert len(forwards_seen) == 4  # the Sequential and its three layers: ours ran, and only ours is left


def test_a_node_is_told_from_a_later_one_at_its_address():
    # A thrown-away module result's node is freed at once; the next node made often lands at its
    # address (this flaked a correct program into AD301 in CI). Whether it does depends on the
    # allocator, so what is tested is what makes the keys differ whatever the address: every
    # later node's sequence number is larger.
    a = torch.randn(3, requires_grad=True)
    first = a * 2
    key = module_forwards.node_key(first.grad_fn)
    assert key[0] == id(first.grad_fn)
    del first
    later = [a * 3 for _ in range(50)]
    keys = [module_forwards.node_key(t.grad_fn) for t in later]
    assert all(number > key[1] for _, number in keys)
    assert key not in keys and len(set(keys)) == len(keys)
    assert module_forwards.node_key(later[0].grad_fn) == keys[0]


def test_shared_graph_walks_give_the_walk_made_without_them():
    x = torch.randn(3, requires_grad=True)
    w = torch.randn(3, requires_grad=True)
    loss = ((x * w).sin() + x.exp()).sum()
    roots = [loss.grad_fn]
    alone = source_scope.graph_nodes(roots)
    with source_scope.shared_graph_walks():
        first = source_scope.graph_nodes(roots)
        second = source_scope.graph_nodes(roots)
        avoiding = source_scope.graph_nodes(roots, avoid={loss.grad_fn.next_functions[0][0]})
    assert first == alone and second == alone
    assert first[0] is not second[0]  # each caller gets its own list
    assert avoiding != alone and avoiding == source_scope.graph_nodes(roots, avoid={loss.grad_fn.next_functions[0][0]})


def test_finite_gradients_told_from_their_norms():
    finite = [torch.randn(5), torch.randn(2, 3, dtype=torch.float64)]
    assert masked_nan._all_finite(finite)
    assert not masked_nan._all_finite([torch.randn(4), torch.tensor([1.0, float("nan")])])
    assert not masked_nan._all_finite([torch.tensor([float("-inf")], dtype=torch.float64)])
    # Finite values whose norm overflows: not told finite, so the caller checks each gradient.
    big = torch.full((4,), 3e38)
    assert bool(torch.isfinite(big).all()) and not masked_nan._all_finite([big])
