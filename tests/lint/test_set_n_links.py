"""Set N (docs/lint.md, sixteenth check).  Its first run's false alarms were
seven ADL017 findings on DirectVoxGO's grid rescale, `self.grid =
nn.Parameter(F.interpolate(self.grid.data, ...))`: a new leaf, which carries
no graph from call to call.  Read by hand, pg_travel's PPO (re-created in
r260) backpropagates one loss twice with the critic's optimizer stepping in
between; the optimizer is built in another file, so ADL003 did not know which
parameters it steps.  Zeroed just before the first backward, it steps exactly
the parameters that backward gave gradients to: those of the loss's graph.
Each claim below is run with torch: the reported code really fails, the silent
code runs, and the suggested change gives the values of a reference."""

from __future__ import annotations

import copy
import importlib.util
import textwrap
from pathlib import Path

import pytest
import torch
import torch.nn as nn

from autograd_doctor.lint import lint_source

RECREATIONS = Path(__file__).parent / "recreations"


def _codes(source: str) -> list[tuple[int, str]]:
    return [(f.line, f.code) for f in lint_source(source, "set_n.py")]


def _namespace(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "set_n.py", "exec"), namespace)
    return namespace


# ----- ADL017: a new leaf carries no graph ------------------------------------

RESCALED_GRID = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class DenseGrid(nn.Module):
        def __init__(self, size):
            super().__init__()
            self.grid = nn.Parameter(torch.zeros([1, 1, size, size, size]))

        def forward(self, xyz):
            out = F.grid_sample(self.grid, xyz.reshape(1, 1, 1, -1, 3), align_corners=True)
            return out.reshape(-1)

        def scale_volume_grid(self, size):
            self.grid = nn.Parameter(
                F.interpolate(self.grid.data, size=(size, size, size), mode='trilinear', align_corners=True))

    def train(grid, xyz, target, sizes):
        for size in sizes:
            grid.scale_volume_grid(size)
            optimizer = torch.optim.SGD(grid.parameters(), lr=0.5)
            for _ in range(2):
                optimizer.zero_grad()
                loss = ((grid(xyz) - target) ** 2).mean()
                loss.backward()
                optimizer.step()
        return grid
    """)

# A state carried from call to call: with its graph (reported: the second
# backward goes through the first call's freed graph), and made a new leaf
# each call (silent: nothing links one call's graph to the next).
CARRIED = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class Memory(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)
            self.state = torch.zeros(3)

        def forward(self, x):
            self.state = torch.tanh(self.fc(x) + self.state)
            return self.state.sum()

    def train(model, inputs):
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for x in inputs:
            optimizer.zero_grad()
            model(x).backward()
            optimizer.step()
        return model
    """)
CARRIED_AS_LEAF = CARRIED.replace("self.state = torch.tanh(self.fc(x) + self.state)",
                                  "self.state = nn.Parameter(torch.tanh(self.fc(x) + self.state))")


def test_a_rescaled_grid_made_a_new_parameter_is_silent_and_trains_across_rescales():
    assert _codes(RESCALED_GRID) == []
    ns = _namespace(RESCALED_GRID)
    torch.manual_seed(0)
    xyz, target = torch.rand(5, 3) * 2 - 1, torch.randn(5)
    grid = ns["train"](ns["DenseGrid"](2), xyz, target, sizes=(3, 4))
    assert grid.grid.is_leaf and grid.grid.grad_fn is None and grid.grid.shape[-1] == 4
    copy.deepcopy(grid)  # a leaf: deep-copyable, unlike a tensor with a graph

    # the same two phases written out on plain tensors give the same grid
    reference = torch.zeros(1, 1, 2, 2, 2)
    for size in (3, 4):
        reference = torch.nn.functional.interpolate(reference, size=(size,) * 3, mode="trilinear",
                                                    align_corners=True).requires_grad_()
        for _ in range(2):
            out = torch.nn.functional.grid_sample(reference, xyz.reshape(1, 1, 1, -1, 3), align_corners=True)
            loss = ((out.reshape(-1) - target) ** 2).mean()
            (grad,) = torch.autograd.grad(loss, reference)
            reference = (reference - 0.5 * grad).detach().requires_grad_()
        reference = reference.detach()
    assert torch.allclose(grid.grid.detach(), reference)


def test_a_state_carried_with_its_graph_is_still_reported_and_fails():
    line = CARRIED.splitlines().index("        self.state = torch.tanh(self.fc(x) + self.state)") + 1
    assert _codes(CARRIED) == [(line, "ADL017")]
    ns = _namespace(CARRIED)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        ns["train"](ns["Memory"](), [torch.randn(3) for _ in range(2)])


def test_a_state_made_a_new_leaf_each_call_is_silent_and_runs():
    assert CARRIED_AS_LEAF != CARRIED
    assert _codes(CARRIED_AS_LEAF) == []
    ns = _namespace(CARRIED_AS_LEAF)
    model = ns["train"](ns["Memory"](), [torch.randn(3) for _ in range(3)])
    assert model.state.is_leaf and model.state.grad_fn is None


# ----- ADL003: one loss backpropagated on both sides of a step ----------------

SAME_LOSS_TWICE = textwrap.dedent("""
    import torch

    def update(actor, critic, states, returns, actor_optim, critic_optim):
        values = critic(states)
        critic_loss = ((values - returns) ** 2).mean()
        actor_loss = -(actor(states) * values.detach()).mean()
        loss = actor_loss + 0.5 * critic_loss
        critic_optim.zero_grad()
        loss.backward(retain_graph=True)
        critic_optim.step()
        actor_optim.zero_grad()
        loss.backward()
        actor_optim.step()
    """)
_TWICE = """    critic_optim.zero_grad()
    loss.backward(retain_graph=True)
    critic_optim.step()
    actor_optim.zero_grad()
    loss.backward()
    actor_optim.step()
"""
ONE_BACKWARD = SAME_LOSS_TWICE.replace(_TWICE, """    critic_optim.zero_grad()
    actor_optim.zero_grad()
    loss.backward()
    critic_optim.step()
    actor_optim.step()
""")
# The actor's loss computed again after the critic's step: a new graph.
RECOMPUTED = SAME_LOSS_TWICE.replace(_TWICE, """    critic_optim.zero_grad()
    critic_loss.backward()
    critic_optim.step()
    actor_optim.zero_grad()
    actor_loss = -(actor(states) * critic(states).detach()).mean()
    actor_loss.backward()
    actor_optim.step()
""")
# Not zeroed before the first backward: the step may move any parameter the
# optimizer holds by gradients left from before; which ones is unknown.
NOT_ZEROED = SAME_LOSS_TWICE.replace("    critic_optim.zero_grad()\n", "")


def _nets():
    torch.manual_seed(0)
    actor = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    critic = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    return actor, critic


def _update(source: str):
    actor, critic = _nets()
    states, returns = torch.randn(6, 4), torch.randn(6, 1)
    actor_optim = torch.optim.SGD(actor.parameters(), lr=0.1)
    critic_optim = torch.optim.SGD(critic.parameters(), lr=0.1)
    _namespace(source)["update"](actor, critic, states, returns, actor_optim, critic_optim)
    return actor, critic, states, returns


def test_a_step_between_two_backwards_of_one_loss_is_reported_and_fails():
    step = SAME_LOSS_TWICE.splitlines().index("    critic_optim.step()") + 1
    assert _codes(SAME_LOSS_TWICE) == [(step, "ADL003")]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _update(SAME_LOSS_TWICE)


def test_one_backward_then_both_steps_is_silent_and_matches_a_reference():
    assert ONE_BACKWARD != SAME_LOSS_TWICE
    assert _codes(ONE_BACKWARD) == []
    actor, critic, states, returns = _update(ONE_BACKWARD)
    # reference: gradients of the same loss at the starting weights, one SGD step each
    ref_actor, ref_critic = _nets()
    values = ref_critic(states)
    loss = -(ref_actor(states) * values.detach()).mean() + 0.5 * ((values - returns) ** 2).mean()
    params = list(ref_actor.parameters()) + list(ref_critic.parameters())
    grads = torch.autograd.grad(loss, params)
    for new, old, grad in zip(list(actor.parameters()) + list(critic.parameters()), params, grads):
        assert torch.allclose(new, old - 0.1 * grad)


def test_a_loss_computed_again_after_the_step_is_silent_and_runs():
    assert RECOMPUTED != SAME_LOSS_TWICE
    assert _codes(RECOMPUTED) == []
    _update(RECOMPUTED)


def test_an_optimizer_not_zeroed_before_the_first_backward_makes_no_claim():
    assert NOT_ZEROED != SAME_LOSS_TWICE
    assert _codes(NOT_ZEROED) == []


def _recreation(name: str):
    return next(RECREATIONS.glob(name + "_*.py"))


def _module_from(source: str, name: str):
    spec = importlib.util.spec_from_loader(name, loader=None)
    module = importlib.util.module_from_spec(spec)
    exec(compile(source, name + ".py", "exec"), module.__dict__)
    return module


def test_r260_one_backward_for_both_optimizers_is_silent_and_runs():
    source = _recreation("r260").read_text(encoding="utf-8")
    twice = """            critic_optim.zero_grad()
            loss.backward(retain_graph=True)
            critic_optim.step()  # expect: ADL003

            actor_optim.zero_grad()
            loss.backward()
            actor_optim.step()
"""
    assert twice in source
    fixed = source.replace(twice, """            critic_optim.zero_grad()
            actor_optim.zero_grad()
            loss.backward()
            critic_optim.step()
            actor_optim.step()
""")
    assert _codes(fixed) == []
    _module_from(fixed, "r260_fixed").run()


def test_r261_requires_grad_call_freezes_vgg_and_keeps_the_models_gradients():
    source = _recreation("r261").read_text(encoding="utf-8")
    typo = "        self.vgg.requires_grad = False  # expect: ADL016\n"
    assert typo in source
    fixed = source.replace(typo, "        self.vgg.requires_grad_(False)\n")
    assert _codes(fixed) == []
    buggy, repaired = _module_from(source, "r261"), _module_from(fixed, "r261_fixed")
    assert buggy.bug_shows() is True and repaired.bug_shows() is False

    def model_gradient(module):
        torch.manual_seed(0)
        model, loss = module.TinySR(), module.VGG('54')
        loss(model(torch.rand(2, 3, 8, 8)), torch.rand(2, 3, 8, 8)).backward()
        return model.body.weight.grad

    # freezing VGG changes nothing for the model being trained
    assert torch.equal(model_gradient(buggy), model_gradient(repaired))
