"""Set M (docs/lint.md, fifteenth check): its first run found nothing in 35
repositories.  Read by hand, perceptual-advex's Newton projection (re-created in
r230) optimizes its input by hand: each iteration backpropagates a distance
into `adv_inputs.grad` and writes `adv_inputs` in place along that gradient,
but nothing clears `adv_inputs.grad`, so every step after the first uses the
sum of all past gradients.  ADL018 knew this only for loops that step an
optimizer; it now also reports a loop that reads `x.grad` and writes `x` in
place on every iteration, with `x` never re-bound and no gradient cleared.
Each claim below is run with torch: the reported loops really pile the
gradients up, the silent ones do not, and the suggested clearing gives the
result of a hand-written reference."""

from __future__ import annotations

import textwrap

import torch

from autograd_doctor.lint import lint_source

DESCENT = textwrap.dedent("""
    import torch

    def descend(f, w, lr, steps):
        for _ in range(steps):
            f(w).backward()
            with torch.no_grad():
                w -= lr * w.grad
        return w
    """)

_UPDATE = "            w -= lr * w.grad\n"
CLEARED = DESCENT.replace(_UPDATE, _UPDATE + "        w.grad = None\n")
CLEARED_BY_ITEM = DESCENT.replace(_UPDATE, _UPDATE + "            w.grad[:] = 0\n")

REBOUND = textwrap.dedent("""
    import torch

    def descend(f, w, lr, steps):
        for _ in range(steps):
            w = w.detach().requires_grad_()
            f(w).backward()
            w.data -= lr * w.grad
        return w
    """)

# Reads the gradient but never moves the input: a test of which inputs each
# output depends on (normflows' MADE test); the piled-up gradient changes no step.
READ_ONLY = textwrap.dedent("""
    import torch

    def dependencies(model, inputs, n):
        inputs.requires_grad = True
        found = []
        for k in range(n):
            model(inputs)[0, k].backward()
            found.append(inputs.grad[0] != 0)
        return found
    """)

STEPPED = textwrap.dedent("""
    import torch

    def descend(f, w, lr, steps):
        optimizer = torch.optim.SGD([w], lr=lr)
        for _ in range(steps):
            f(w).backward()
            print(w.grad.norm())
            optimizer.step()
            w.data.clamp_(-1, 1)
        return w
    """)


def _codes(source: str) -> list[tuple[int, str]]:
    return [(f.line, f.code) for f in lint_source(source, "descent.py")]


def _run(source: str, steps: int = 3):
    namespace: dict = {}
    exec(compile(source, "descent.py", "exec"), namespace)
    w = torch.tensor([1.0, -2.0], requires_grad=True)
    namespace["descend"](lambda v: (v ** 2).sum(), w, 0.1, steps)
    return w.detach()


def _reference(steps: int = 3):
    """Gradient descent on sum(w**2), gradient 2w, written out by hand."""
    w = torch.tensor([1.0, -2.0])
    for _ in range(steps):
        w = w - 0.1 * (2 * w)
    return w


def test_hand_descent_without_clearing_is_reported_and_piles_up():
    assert _codes(DESCENT) == [(8, "ADL018")]
    assert not torch.allclose(_run(DESCENT), _reference())


def test_clearing_the_gradient_is_silent_and_matches_the_reference():
    assert _UPDATE in DESCENT
    for source in (CLEARED, CLEARED_BY_ITEM):
        assert _codes(source) == []
        assert torch.allclose(_run(source), _reference())


def test_a_tensor_made_new_each_iteration_is_silent():
    assert _codes(REBOUND) == []
    namespace: dict = {}
    exec(compile(REBOUND, "descent.py", "exec"), namespace)
    w = namespace["descend"](lambda v: (v ** 2).sum(), torch.tensor([1.0, -2.0]), 0.1, 3)
    assert torch.allclose(w.detach(), _reference())


def test_a_gradient_only_read_is_silent():
    assert _codes(READ_ONLY) == []
    namespace: dict = {}
    exec(compile(READ_ONLY, "made.py", "exec"), namespace)
    weight = torch.tril(torch.ones(3, 3), diagonal=-1)  # output k depends on inputs < k
    found = namespace["dependencies"](lambda x: x @ weight.T, torch.randn(1, 3), 3)
    assert [d.tolist() for d in found] == [[False] * 3, [True, False, False], [True, True, False]]


def test_a_loop_that_steps_an_optimizer_is_left_to_the_first_check():
    # the step-based check reports the `optimizer.step()` line; the `.grad` read is not reported again
    assert _codes(STEPPED) == [(9, "ADL018")]


def test_r230_clearing_after_the_read_gives_the_true_gradient():
    from pathlib import Path
    import importlib.util

    path = Path(__file__).parent / "recreations" / "r230_newton_projection_reads_piled_up_input_gradient.py"
    source = path.read_text(encoding="utf-8")
    read = "            grad = adv_inputs.grad.data[needs_projection]  # expect: ADL018\n"
    assert read in source
    fixed = source.replace(read, read + "            adv_inputs.grad = None\n")
    assert _codes(fixed) == []
    spec = importlib.util.spec_from_loader("r230_fixed", loader=None)
    module = importlib.util.module_from_spec(spec)
    exec(compile(fixed, "r230_fixed.py", "exec"), module.__dict__)
    assert module.bug_shows() is False


# icefall's activation tests (left out of set M for its size; four copies of
# `scaling.py`): the copy is cut from the original's graph by `.detach()` and
# made a leaf of its own, so its `.grad` is filled.  ADL020 took it for the
# non-leaf `.clone()` makes.
COPY_AS_LEAF = textwrap.dedent("""
    import torch

    def compare_grads():
        x1 = torch.randn(10, 4)
        x1.requires_grad = True
        x2 = x1.clone().detach()
        x2.requires_grad = True
        (x1 * 2).sum().backward()
        (x2 * 2).sum().backward()
        return x1.grad, x2.grad
    """)
COPY_IN_GRAPH = COPY_AS_LEAF.replace("x1.clone().detach()", "x1.clone()").replace(
    "    x2.requires_grad = True\n", "")


def test_a_detached_copy_is_a_leaf_and_silent():
    assert _codes(COPY_AS_LEAF) == []
    namespace: dict = {}
    exec(compile(COPY_AS_LEAF, "scaling.py", "exec"), namespace)
    g1, g2 = namespace["compare_grads"]()
    assert g2 is not None and torch.equal(g1, g2)


def test_a_copy_in_the_graph_is_still_reported_and_gets_no_grad():
    assert "x2.requires_grad" not in COPY_IN_GRAPH
    assert _codes(COPY_IN_GRAPH) == [(10, "ADL020")]
    namespace: dict = {}
    exec(compile(COPY_IN_GRAPH, "scaling.py", "exec"), namespace)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "The .grad attribute of a Tensor that is not a leaf ..."
        g1, g2 = namespace["compare_grads"]()
    assert g2 is None and torch.equal(g1, torch.full((10, 4), 4.0))
