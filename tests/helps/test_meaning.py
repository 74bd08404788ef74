"""The meaning check behind `--verify-fix`, `--diff` and `--fix` (autograd_doctor.cli.meaning): a
changed program is *verified* only when its forward values equal the original run's and its
gradients and stepped parameters equal the oracle's (the original program with each tensor
autograd saved copied before it is written in place); a plausible change that runs but
computes something else is rejected; where no oracle applies the answer is *unverified*.

Each test runs real programs in child processes, exactly as the verify path runs them: the
original under the oracle (`python -m autograd_doctor.cli.meaning`), the changed one under
`autograd-doctor run` with the capture turned on."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from autograd_doctor.cli.meaning import CAPTURE_VARIABLE, judge, load


def _values(tmp_path, source: str, name: str, oracle: bool) -> dict:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    capture = tmp_path / f"{name}.pt"
    environment = dict(os.environ)
    if oracle:
        command = [sys.executable, "-m", "autograd_doctor.cli.meaning", str(capture), str(path)]
    else:
        command = [sys.executable, "-m", "autograd_doctor", "run", "--no-rerun", str(path)]
        environment[CAPTURE_VARIABLE] = str(capture)
    subprocess.run(command, cwd=tmp_path, env=environment, capture_output=True, timeout=900)
    values = load(str(capture))
    assert values is not None, f"no values recorded for {name}"
    return values


def _verdict(tmp_path, buggy: str, changed: str, original_raised: bool = True):
    original = _values(tmp_path, buggy, "original", oracle=True)
    return judge(original, _values(tmp_path, changed, "changed", oracle=False), original_raised)


# AD101: a write into a tensor that sigmoid saved.
SAVED_WRITE = """
    import torch
    torch.manual_seed(0)
    w = torch.randn(4, requires_grad=True)
    h = w.sigmoid()
    h[0] = 0.0
    (h * w).sum().backward()
"""


# AD101 through a view at another offset: `mul` saved `h` (its first element on), the write goes
# into column 1. PyTorch's allow_mutation_on_saved_tensors() matches writes by data_ptr() and
# misses this one; the oracle must still give the gradients the program meant.
COLUMN_WRITE = """
    import torch
    torch.manual_seed(0)
    w = torch.randn(3, 4, requires_grad=True)
    h = torch.tanh(w)
    energy = (h * h).sum()
    h[:, 1] = h[:, 1] * 0.5
    (energy + h.sum()).backward()
"""


def test_the_oracle_sees_a_write_through_a_view_at_another_offset(tmp_path):
    changed = COLUMN_WRITE.replace("h[:, 1] = h[:, 1] * 0.5",
                                   "h = torch.cat([h[:, :1], h[:, 1:2] * 0.5, h[:, 2:]], dim=1)")
    verdict = _verdict(tmp_path, COLUMN_WRITE, changed)
    assert verdict.status == "verified", verdict.line()


def test_the_oracle_keeps_no_saved_tensor_once_the_graph_is_freed():
    import gc
    import weakref

    import torch

    from autograd_doctor.recording.saved_values_kept import keep_saved_values

    with keep_saved_values():
        w = torch.randn(3, 4, requires_grad=True)
        h = torch.tanh(w)
        energy = (h * h).sum()
        h[:, 1] = 0.0
        kept = weakref.ref(h)
        energy.backward()
    expected = 2 * torch.tanh(w.detach()) * (1 - torch.tanh(w.detach()) ** 2)
    assert torch.allclose(w.grad, expected)
    del h, energy
    gc.collect()
    assert kept() is None


def test_ad101_an_out_of_place_write_is_verified_by_the_oracle(tmp_path):
    changed = SAVED_WRITE.replace("h[0] = 0.0", "h = torch.cat([h.new_zeros(1), h[1:]])")
    verdict = _verdict(tmp_path, SAVED_WRITE, changed)
    assert verdict.status == "verified", verdict.line()
    assert "copied before it is written in place" in verdict.reason and "bitwise" in verdict.reason


def test_ad101_a_write_moved_under_no_grad_is_rejected(tmp_path):
    # Plausible but wrong: the sigmoid is taken of a detached copy, so w's gradient loses a term.
    changed = SAVED_WRITE.replace("h = w.sigmoid()", "h = w.detach().sigmoid()")
    verdict = _verdict(tmp_path, SAVED_WRITE, changed)
    assert verdict.status == "rejected"
    assert "gradient of `w`" in verdict.reason


# Two writes of one kind into views of one tensor that sigmoid saved (AD101, twice).
SLICE_WRITES = """
    import torch
    torch.manual_seed(0)
    lin = torch.nn.Linear(3, 4)
    x = torch.randn(2, 3)
    h = lin(x).sigmoid()
    u, v = h[:, :2], h[:, 2:]
    u *= 2.0
    v *= 3.0
    (u * v).sum().backward()
"""


def test_ad101_both_writes_rewritten_are_verified(tmp_path):
    changed = SLICE_WRITES.replace("u *= 2.0", "u = u * 2.0").replace("v *= 3.0", "v = v * 3.0")
    verdict = _verdict(tmp_path, SLICE_WRITES, changed)
    assert verdict.status == "verified", verdict.line()


def test_ad101_scaling_the_wrong_tensor_is_rejected(tmp_path):
    changed = SLICE_WRITES.replace("u *= 2.0", "u = u * 2.0").replace("v *= 3.0", "v = v.detach() * 3.0")
    verdict = _verdict(tmp_path, SLICE_WRITES, changed)
    assert verdict.status == "rejected"
    assert "`lin.weight`" in verdict.reason or "`lin.bias`" in verdict.reason


# AD104: chunk() outputs written in place. PyTorch refuses the write itself, under the oracle too.
CHUNK_WRITES = SLICE_WRITES.replace("h = lin(x).sigmoid()\n    u, v = h[:, :2], h[:, 2:]",
                                    "u, v = lin(x).sigmoid().chunk(2, dim=1)")


def test_ad104_has_no_oracle_so_a_right_change_is_unverified(tmp_path):
    changed = CHUNK_WRITES.replace("u *= 2.0", "u = u * 2.0").replace("v *= 3.0", "v = v * 3.0")
    verdict = _verdict(tmp_path, CHUNK_WRITES, changed)
    assert verdict.status == "unverified", verdict.line()
    assert "Output 0 of Split is a view" in verdict.reason


# AD103: an optimizer step between a forward pass and the backward through it (actor-critic).
STEP_BETWEEN = """
    import torch
    torch.manual_seed(0)
    critic = torch.nn.Linear(2, 1)
    actor = torch.nn.Linear(2, 2)
    opt_critic = torch.optim.SGD(critic.parameters(), lr=0.1)
    opt_actor = torch.optim.SGD(actor.parameters(), lr=0.1)
    state = torch.randn(3, 2)
    q = critic(actor(state).tanh())
    critic_loss = (q - 1.0).pow(2).mean()
    opt_critic.zero_grad()
    critic_loss.backward(retain_graph=True)
    opt_critic.step()
    actor_loss = -q.mean()
    opt_actor.zero_grad()
    actor_loss.backward()
    opt_actor.step()
"""


def test_ad103_stepping_after_the_last_backward_is_verified(tmp_path):
    # The oracle keeps the critic's weights as the forward pass used them: the actor's gradient
    # goes through the critic before its step, which is what stepping later computes.
    changed = STEP_BETWEEN.replace("    opt_critic.step()\n", "").replace(
        "    opt_actor.step()\n", "    opt_actor.step()\n    opt_critic.step()\n")
    verdict = _verdict(tmp_path, STEP_BETWEEN, changed)
    assert verdict.status == "rejected" or verdict.status == "verified"
    # The order of step() calls differs, so the recorded events differ: the judge must not call
    # this verified by accident; the step's parameters are compared as recorded.
    if verdict.status == "verified":
        assert "parameters" in verdict.reason


def test_ad103_dropping_the_critic_from_the_actor_loss_is_rejected(tmp_path):
    changed = STEP_BETWEEN.replace("actor_loss = -q.mean()", "actor_loss = -q.detach().mean() - 0 * actor.weight.sum()")
    verdict = _verdict(tmp_path, STEP_BETWEEN, changed)
    assert verdict.status == "rejected"


# AD103 where the two updates share no graph: the actor's update moved before the critic's.
TWO_UPDATES = """
    import torch
    torch.manual_seed(0)
    critic = torch.nn.Linear(3, 1)
    actor = torch.nn.Linear(2, 1)
    opt_critic = torch.optim.SGD(critic.parameters(), lr=0.1)
    opt_actor = torch.optim.SGD(actor.parameters(), lr=0.1)
    state, taken = torch.randn(4, 2), torch.randn(4, 1)
    actor_loss = -critic(torch.cat([state, actor(state)], dim=1)).mean()
    critic_loss = (critic(torch.cat([state, taken], dim=1)) - 1.0).pow(2).mean()
    opt_critic.zero_grad()
    critic_loss.backward()
    opt_critic.step()
    opt_actor.zero_grad()
    actor_loss.backward()
    opt_actor.step()
"""
CRITIC_UPDATE = "    opt_critic.zero_grad()\n    critic_loss.backward()\n    opt_critic.step()\n"
ACTOR_UPDATE = "    opt_actor.zero_grad()\n    actor_loss.backward()\n    opt_actor.step()\n"


def test_ad103_the_same_updates_in_another_order_are_unverified_not_rejected(tmp_path):
    # The same losses and the same parameters after each step, in another order: which order
    # is meant is an intent the oracle does not decide.
    changed = TWO_UPDATES.replace(CRITIC_UPDATE + ACTOR_UPDATE, ACTOR_UPDATE + CRITIC_UPDATE)
    verdict = _verdict(tmp_path, TWO_UPDATES, changed)
    assert verdict.status == "unverified", verdict.line()
    assert "in another order" in verdict.reason


def test_ad103_another_order_that_trains_the_critic_on_both_losses_is_rejected(tmp_path):
    # Without the critic's zero_grad() after the actor's backward(), the critic's step applies
    # the actor's gradients too: other parameters, so not merely another order.
    changed = TWO_UPDATES.replace(CRITIC_UPDATE + ACTOR_UPDATE, ACTOR_UPDATE + CRITIC_UPDATE.replace(
        "    opt_critic.zero_grad()\n", ""))
    verdict = _verdict(tmp_path, TWO_UPDATES, changed)
    assert verdict.status == "rejected", verdict.line()


# AD302: backward through a graph an earlier backward freed. No oracle: unverified at best.
TWO_LOSSES = """
    import torch
    torch.manual_seed(0)
    w = torch.randn(3, requires_grad=True)
    h = (w * 2).tanh()
    loss1 = h.sum()
    loss2 = (h * h).sum()
    loss1.backward()
    loss2.backward()
"""


def test_ad302_a_right_change_is_unverified_not_verified(tmp_path):
    changed = TWO_LOSSES.replace("loss1.backward()\n    loss2.backward()", "(loss1 + loss2).backward()")
    verdict = _verdict(tmp_path, TWO_LOSSES, changed)
    # One backward() of the sum instead of two: the forward values differ in number, and there
    # is no gradient oracle for a freed graph; never "verified".
    assert verdict.status != "verified"


def test_ad302_retain_graph_is_unverified_with_the_reason(tmp_path):
    changed = TWO_LOSSES.replace("loss1.backward()", "loss1.backward(retain_graph=True)")
    verdict = _verdict(tmp_path, TWO_LOSSES, changed)
    assert verdict.status == "unverified", verdict.line()
    assert "no oracle" in verdict.reason and "fails too" in verdict.reason


def test_ad302_a_change_that_alters_the_forward_values_is_rejected(tmp_path):
    changed = TWO_LOSSES.replace("loss1.backward()", "loss1 = loss1 * 2\n    loss1.backward(retain_graph=True)")
    verdict = _verdict(tmp_path, TWO_LOSSES, changed)
    assert verdict.status == "rejected"
    assert "backward() call 1" in verdict.reason


# AD302 where the weights are written in place between the two backward() calls (a sharpness-aware
# step): the second loss is meant at the new weights, so the change computes its forward again.
CLIMB = """
    import torch
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    x = torch.randn(5, 3)
    output = model(x)
    output.pow(2).mean().backward()
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.05 * p.grad)
    model.zero_grad()
    output.abs().mean().backward()
"""
RECOMPUTED = CLIMB.replace("output.abs().mean().backward()", "model(x).abs().mean().backward()")


def test_ad302_a_recomputed_forward_is_compared_up_to_the_failing_backward(tmp_path):
    original = _values(tmp_path, CLIMB, "original", oracle=True)
    changed = _values(tmp_path, RECOMPUTED, "changed", oracle=False)
    verdict = judge(original, changed, True, recomputes_failing_forward=True)
    assert verdict.status == "unverified", verdict.line()
    assert "before the failing backward() equal the original's" in verdict.reason
    assert "computed again by the change" in verdict.reason and "no oracle" in verdict.reason
    # Judged as any other change, its second loss (at the new weights) differs from the stale one.
    assert judge(original, changed, True).status == "rejected"


def test_ad302_a_recomputed_forward_that_alters_an_earlier_loss_is_rejected(tmp_path):
    altered = RECOMPUTED.replace("output.pow(2).mean().backward()", "(2 * output.pow(2).mean()).backward()")
    original = _values(tmp_path, CLIMB, "original", oracle=True)
    changed = _values(tmp_path, altered, "changed", oracle=False)
    verdict = judge(original, changed, True, recomputes_failing_forward=True)
    assert verdict.status == "rejected"
    assert "backward() call 1" in verdict.reason


def test_a_program_using_torch_func_grad_is_recorded(tmp_path):
    """torch.func.grad calls torch.autograd.grad on the transform's wrapped tensors: the capture
    leaves those calls alone (their values cannot leave the transform) instead of failing."""
    values = _values(tmp_path, """
        import torch
        from torch.func import grad, vmap
        w = torch.randn(3, requires_grad=True)
        x = torch.randn(4, 3)
        per_sample = vmap(grad(lambda w, x: (x * w).tanh().sum()), in_dims=(None, 0))(w, x)
        (per_sample.sum(0) * w).sum().backward()
    """, "changed", oracle=False)
    assert values["error"] is None
    assert [kind for kind, _ in values["events"]] == ["backward"]  # the program's own backward() only
    assert "w.grad" in values["final"]


# AD102: a leaf written in place. The original fails under the oracle too: unverified.
LEAF_WRITE = """
    import torch
    w = torch.ones(3, requires_grad=True)
    w.mul_(2)
    (w * w).sum().backward()
"""


def test_ad102_no_grad_write_is_unverified(tmp_path):
    changed = LEAF_WRITE.replace("w.mul_(2)", "with torch.no_grad():\n        w.mul_(2)")
    verdict = _verdict(tmp_path, LEAF_WRITE, changed)
    assert verdict.status == "unverified", verdict.line()


# A silent problem (the original raises nothing): the change is meant to change the gradients.
SILENT = """
    import torch
    w = torch.ones(3, requires_grad=True)
    loss = (w * 2).sum()
    penalty = w.pow(2).sum().item()
    (loss + penalty).backward()
"""


def test_a_silent_problem_is_never_verified(tmp_path):
    changed = SILENT.replace("w.pow(2).sum().item()", "w.pow(2).sum()")
    verdict = _verdict(tmp_path, SILENT, changed, original_raised=False)
    assert verdict.status == "unverified"
    assert "raised nothing" in verdict.reason


def test_a_changed_program_that_still_fails_is_rejected(tmp_path):
    verdict = _verdict(tmp_path, SAVED_WRITE, SAVED_WRITE)
    assert verdict.status == "rejected"
    assert verdict.reason.startswith("the changed program still fails: RuntimeError")


@pytest.mark.parametrize("name", ["backward", "grad"])
def test_the_capture_restores_torch(tmp_path, name):
    import torch

    from autograd_doctor.cli.meaning import Capture

    before = getattr(torch.autograd, name)
    capture = Capture(str(tmp_path / "values.pt")).start()
    assert getattr(torch.autograd, name) is not before
    capture.finish({}, None)
    assert getattr(torch.autograd, name) is before


def _events(*losses, error="RuntimeError: boom"):
    import torch

    return {"events": [("backward", [torch.tensor(value)]) for value in losses], "final": {}, "error": error}


def test_a_fix_that_corrects_the_steps_before_the_raise_is_compared_on_the_first_backward():
    """AD185 (DDP's unused-parameter search with a reentrant checkpoint): the steps before the raise
    were already wrong, so a right change hands other values to every backward() after the first."""
    original, changed = _events(1.0, 2.0), {**_events(1.0, 1.5, 1.25), "error": None}
    verdict = judge(original, changed, True, corrects_earlier_steps=True)
    assert verdict.status == "unverified", verdict.line()
    assert "first backward() equal the original's" in verdict.reason and "no oracle" in verdict.reason
    assert judge(original, changed, True).status == "rejected"  # judged as any other change
    other_first = {**_events(0.5, 1.5, 1.25), "error": None}
    verdict = judge(original, other_first, True, corrects_earlier_steps=True)
    assert verdict.status == "rejected" and verdict.computes_other_values


def test_ad185_the_non_reentrant_checkpoint_is_offered_as_a_change_not_advice(tmp_path):
    """The set 22 case (accelerate#389): `use_reentrant=False` stays a change to apply, unverified."""
    import shutil

    from helpers import run_cli

    case = os.path.join(os.path.dirname(__file__), "..", "bug_reports", "fresh", "set22", "cases",
                        "a_vision_backbone_ddp_reentrant_checkpoint_unused_param_search.py")
    path = tmp_path / "train.py"
    shutil.copy(case, path)
    result = run_cli("run", "--verify-fix", str(path), cwd=str(tmp_path), timeout=900)
    assert "AD185" in result.stdout + result.stderr
    assert "use_reentrant=False" in result.stdout + result.stderr
    assert "unverified: the changed program runs and the values handed to its first backward()" \
        in result.stdout + result.stderr
    assert "not offered as a change" not in result.stdout + result.stderr


# Set 31, part B (momentumnet#21): a change that skips the call that failed, `grads = grad(out,
# params) if params else ()`, shifts every later call; only the calls before it can be compared.
SKIPS_FAILING_CALL = """
    import torch
    from torch import nn

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    first = model(torch.randn(16, 4)).pow(2).mean()
    first.backward()
    for step in range(2):
        loss = model(torch.randn(16, 4)).pow(2).mean()
        params = list(model[1].parameters())
        grads = CALL
        optimizer.zero_grad()
        (loss * 3).backward()
        optimizer.step()
    result = [p.detach() for p in model.parameters()]
"""


def test_a_change_that_skips_the_failing_call_is_unverified_not_other_values(tmp_path):
    original = SKIPS_FAILING_CALL.replace("CALL", "torch.autograd.grad(loss, params, retain_graph=True)")
    changed = original.replace("retain_graph=True)", "retain_graph=True) if params else ()")
    verdict = _verdict(tmp_path, original, changed)
    assert verdict.status == "unverified"
    assert "no longer makes the call that failed (backward()/autograd.grad() call 2)" in verdict.reason


def test_the_failing_call_made_with_other_values_is_still_other_values(tmp_path):
    # The same statement still makes the call, on another loss: not a skipped call.
    original = SKIPS_FAILING_CALL.replace("CALL", "torch.autograd.grad(loss, params, retain_graph=True)")
    changed = original.replace("params = list(model[1].parameters())", "params = list(model[0].parameters())") \
        .replace("grad(loss, params", "grad(loss * 2, params")
    verdict = _verdict(tmp_path, original, changed)
    assert verdict.status != "unverified" or "no longer makes the call" not in verdict.reason
