"""Set R (docs/lint.md, twentieth check).  The set's first run had one false
alarm, from one general cause:

* ADL003 on the relativistic GAN's PacGAN script
  (https://github.com/AlexiaJM/RelativisticGAN, `code/GAN_losses_iter_PAC.py`):
  the generator's loop reuses `fake`, computed by `G(z)` before the loop, and
  rebinds it from itself (`fake = torch.cat([fake[:n], fake[n:]], 1)`; here
  rows swapped along dim 0, so that a second iteration runs), then
  `errG.backward()` (no `retain_graph`) and `optimizerG.step()`.  The finding
  said the next iteration's backward fails because the step changed what the
  graph saved.  But that backward already went through the same graph in the
  previous iteration and freed it: the next run fails on the freed graph
  ("backward through the graph a second time", ADL019's case), never on the
  step.  The rule kept its own contract (a graph an earlier backward without
  `retain_graph` freed is not claimed) only in source order, not for the
  backward's own run in the previous iteration.

Each claim below is run with torch: the reported code really fails with the
error the finding names, the silent code fails (if at all) with another one,
and a single iteration equals one SGD step written by hand."""

from __future__ import annotations

import textwrap

import pytest
import torch

from autograd_doctor.lint import lint_source


def _codes(source: str) -> list[tuple[int, str]]:
    return [(f.line, f.code) for f in lint_source(source, "set_r.py")]


def _namespace(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "set_r.py", "exec"), namespace)
    return namespace


def _line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


# The generator's loop of the PacGAN script, in small: `fake` from before the
# loop, rebound from itself in the body, a backward that frees its graph.
GENERATOR_LOOP = textwrap.dedent("""
    import torch
    import torch.nn as nn

    torch.manual_seed(0)
    G = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 4))
    D = nn.Sequential(nn.Linear(4, 1))
    optimizerG = torch.optim.SGD(G.parameters(), lr=0.1)


    def train(z, g_iters, half):
        fake = G(z)
        for t in range(g_iters):
            G.zero_grad()
            fake = torch.cat([fake[half:], fake[:half]], 0)
            errG = -D(fake).mean()
            errG.backward()
            optimizerG.step()
    """)

# The same loop when the backward keeps its graph: the next iteration's backward
# reaches the graph built before the step, which saved the old weights.
GENERATOR_LOOP_RETAINED = GENERATOR_LOOP.replace("errG.backward()", "errG.backward(retain_graph=True)")

# A freeing backward, but `fake` is rebound after it and before the step: the
# next iteration reads that new value, whose graph no backward freed.
REBOUND_AFTER_BACKWARD = textwrap.dedent("""
    import torch
    import torch.nn as nn

    torch.manual_seed(0)
    G = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 4))
    D = nn.Sequential(nn.Linear(4, 1))
    optimizerG = torch.optim.SGD(G.parameters(), lr=0.1)


    def train(z, g_iters):
        fake = G(z)
        for t in range(g_iters):
            G.zero_grad()
            errG = -D(fake).mean()
            errG.backward()
            fake = G(z + 1)
            optimizerG.step()
    """)

# A list of separate graphs built before the loop, one element per iteration:
# the next iteration's element was built before the step and never freed.
LIST_OF_GRAPHS = textwrap.dedent("""
    import torch
    import torch.nn as nn

    torch.manual_seed(0)
    G = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 4))
    D = nn.Sequential(nn.Linear(4, 1))
    optimizerG = torch.optim.SGD(G.parameters(), lr=0.1)


    def train(zs):
        fakes = [G(z) for z in zs]
        for t in range(len(zs)):
            G.zero_grad()
            errG = -D(fakes[t]).mean()
            errG.backward()
            optimizerG.step()
    """)

# `fake` only read in the loop: ADL019 names the real failure, ADL003 must not.
READ_ONLY_IN_LOOP = textwrap.dedent("""
    import torch
    import torch.nn as nn

    torch.manual_seed(0)
    G = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 4))
    D = nn.Sequential(nn.Linear(4, 1))
    optimizerG = torch.optim.SGD(G.parameters(), lr=0.1)


    def train(z, g_iters):
        fake = G(z)
        for t in range(g_iters):
            G.zero_grad()
            errG = -D(fake).mean()
            errG.backward()
            optimizerG.step()
    """)


def _second_run_error(source: str, *args) -> str:
    namespace = _namespace(source)
    with pytest.raises(RuntimeError) as raised:
        namespace["train"](torch.randn(4, 3), 2, *args)
    return str(raised.value)


def test_backward_that_freed_its_graph_last_iteration_is_not_blamed_on_the_step():
    assert [c for c in _codes(GENERATOR_LOOP) if c[1] == "ADL003"] == []
    # what a second iteration really does: the freed graph, not the step
    assert "backward through the graph a second time" in _second_run_error(GENERATOR_LOOP, 2)


def test_one_iteration_of_the_silent_loop_is_one_sgd_step():
    namespace = _namespace(GENERATOR_LOOP)
    G, D = namespace["G"], namespace["D"]
    before = [p.detach().clone() for p in G.parameters()]
    z = torch.randn(4, 3)
    namespace["train"](z, 1, 2)
    # the same step by hand, on a copy of the starting weights
    weights = [p.clone().requires_grad_(True) for p in before]
    h = torch.tanh(z @ weights[0].t() + weights[1]) @ weights[2].t() + weights[3]
    h = torch.cat([h[2:], h[:2]], 0)
    loss = -(h @ D[0].weight.t() + D[0].bias).mean()
    grads = torch.autograd.grad(loss, weights)
    for p, w, g in zip(G.parameters(), before, grads):
        torch.testing.assert_close(p.detach(), w - 0.1 * g)


def test_retained_graph_reused_after_the_step_is_still_reported_and_raises():
    found = _codes(GENERATOR_LOOP_RETAINED)
    assert (_line_of(GENERATOR_LOOP_RETAINED, "optimizerG.step()"), "ADL003") in found
    assert "modified by an inplace operation" in _second_run_error(GENERATOR_LOOP_RETAINED, 2)


def test_value_rebound_between_backward_and_step_is_still_reported_and_raises():
    found = _codes(REBOUND_AFTER_BACKWARD)
    assert (_line_of(REBOUND_AFTER_BACKWARD, "optimizerG.step()"), "ADL003") in found
    assert "modified by an inplace operation" in _second_run_error(REBOUND_AFTER_BACKWARD)


def test_list_element_built_before_the_step_is_still_reported_and_raises():
    found = _codes(LIST_OF_GRAPHS)
    assert (_line_of(LIST_OF_GRAPHS, "optimizerG.step()"), "ADL003") in found
    namespace = _namespace(LIST_OF_GRAPHS)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        namespace["train"]([torch.randn(4, 3) for _ in range(2)])


def test_graph_read_again_in_the_loop_is_adl019s_not_adl003s():
    found = _codes(READ_ONLY_IN_LOOP)
    assert (_line_of(READ_ONLY_IN_LOOP, "errG.backward()"), "ADL019") in found
    assert [c for c in found if c[1] == "ADL003"] == []
    assert "backward through the graph a second time" in _second_run_error(READ_ONLY_IN_LOOP)


# ----- r350: BEGAN's one backward of `d_loss + g_loss` (found by ADL024) -----------

def test_r350_generator_loss_kept_from_the_discriminator_gives_its_own_gradient():
    """The recreation's `bug_shows()` is the wrong gradient; here, the same step
    with D's parameters frozen while `g_loss` is built (as RelativisticGAN's
    generator loop does) gives D exactly the gradient of `d_loss`, and G that
    of `g_loss`, each written by hand."""
    import importlib.util
    from pathlib import Path

    path = next((Path(__file__).parent / "recreations").glob("r350_*.py"))
    spec = importlib.util.spec_from_file_location("r350", path)
    r350 = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(r350)
    G, D, l1 = r350.G, r350.D, r350.l1
    x, z, k_t = torch.randn(5, 4), torch.randn(5, 2), 0.3
    fake = G(z)
    d_wanted = torch.autograd.grad(l1(D(x), x) - k_t * l1(D(fake.detach()), fake.detach()), list(D.parameters()))
    g_wanted = torch.autograd.grad(l1(fake, D(fake)), list(G.parameters()))
    # the fixed step: one backward still, but D does not take g_loss's gradient
    D.zero_grad()
    G.zero_grad()
    fake = G(z)
    d_loss = l1(D(x), x) - k_t * l1(D(fake.detach()), fake.detach())
    for p in D.parameters():
        p.requires_grad_(False)
    g_loss = l1(fake, D(fake))
    for p in D.parameters():
        p.requires_grad_(True)
    (d_loss + g_loss).backward()
    for p, w in zip(D.parameters(), d_wanted):
        torch.testing.assert_close(p.grad, w)
    for p, w in zip(G.parameters(), g_wanted):
        torch.testing.assert_close(p.grad, w)
    assert r350.bug_shows()  # the file as written still mixes them
