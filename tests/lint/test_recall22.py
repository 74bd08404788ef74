"""Causes of the misses of r546-r560 (docs/lint.md, "A twenty-second held-out
set, written as real code is written (r546-r560)").

* ADL022, a clip after the step whose result is kept: `total_norm =
  clip_grad_norm_(...)` (r551) is the clip as an assignment; the gradients are
  rescaled after the step used them all the same.  A clip to an infinite norm
  (`float("inf")`, the idiom for measuring the norm) is not a clip.
* A plain class's attribute leaf: `self.w = torch.zeros(n, requires_grad=True)`
  in `__init__`, bound nowhere else in the class.  It is graph evidence for
  `self.w` in the class's methods (ADL001 on a value made from it, r548), and an
  in-place write to it in another method that a call of the file runs with
  gradients on raises (ADL014, r558).

Each cause: the re-creation's form and fresh programs in other shapes (written
before the rule was run on them), buggy -> a finding at the line, correct near
twins silent, and the claim run with torch."""

from __future__ import annotations

import textwrap

import pytest
import torch

from autograd_doctor.lint import lint_source


def _codes(source: str) -> list[tuple[int, str]]:
    return [(f.line, f.code) for f in lint_source(source, "recall22.py")]


def _namespace(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "recall22.py", "exec"), namespace)
    return namespace


def _line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def _twin(source: str, old: str, new: str) -> str:
    assert source.count(old) == 1, old
    return source.replace(old, new)


# ----- ADL022: the clip after the step, its norm kept ---------------------------------

CLIP_KEPT = textwrap.dedent("""
    import torch
    import torch.nn as nn


    def train(model, batches, lr=0.1, max_norm=0.5, log=None):
        opt = torch.optim.SGD(model.parameters(), lr=lr)
        for x, y in batches:
            opt.zero_grad()
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            opt.step()
            grad_norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            if log is not None:
                log.append(float(grad_norm))
        return model
""")

# a fresh shape: a `while` loop of a trainer method, the clip under an `if`,
# with an annotation
CLIP_KEPT_METHOD = textwrap.dedent("""
    import torch


    class Trainer:
        def __init__(self, model, clip=1.0):
            self.model = model
            self.optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
            self.clip = clip

        def run(self, data, steps):
            step = 0
            while step < steps:
                x, y = data[step % len(data)]
                self.optimizer.zero_grad()
                loss = torch.nn.functional.mse_loss(self.model(x), y)
                loss.backward()
                self.optimizer.step()
                if self.clip:
                    norm: torch.Tensor = torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.clip)
                step += 1
""")


def test_clip_after_step_with_its_norm_kept_is_reported():
    assert _codes(CLIP_KEPT) == [(_line_of(CLIP_KEPT, "grad_norm = nn.utils"), "ADL022")]
    assert _codes(CLIP_KEPT_METHOD) == [(_line_of(CLIP_KEPT_METHOD, "norm: torch.Tensor"), "ADL022")]


def test_clip_before_the_step_or_to_an_infinite_norm_is_silent():
    before = _twin(CLIP_KEPT, """        opt.step()
        grad_norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm)
""", """        grad_norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        opt.step()
""")
    assert _codes(before) == []
    measured = _twin(CLIP_KEPT, "clip_grad_norm_(model.parameters(), max_norm)",
                     "clip_grad_norm_(model.parameters(), float(\"inf\"))")
    assert _codes(measured) == []
    keyword = _twin(CLIP_KEPT_METHOD, "clip_grad_norm_(self.model.parameters(), self.clip)",
                    "clip_grad_norm_(self.model.parameters(), max_norm=math.inf)")
    assert _codes("import math\n" + keyword) == []


def test_clip_after_step_applies_the_unclipped_gradient():
    """Run: the buggy order moves the weights by lr * g (unclipped); the order the
    help asks for moves them by lr * g * max_norm / ||g||."""
    def moved(source):
        torch.manual_seed(0)
        model = torch.nn.Linear(3, 1)
        w0 = model.weight.detach().clone()
        x, y = torch.randn(4, 3) * 10, torch.randn(4, 1) * 50
        g = torch.autograd.grad(((model(x) - y) ** 2).mean(), model.weight)[0]
        _namespace(source)["train"](model, [(x, y)], lr=0.1, max_norm=0.5)
        return model.weight.detach() - w0, g, model.bias
    bug, g, _ = moved(CLIP_KEPT)
    assert torch.allclose(bug, -0.1 * g, atol=1e-5)
    fixed, g, bias = moved(_twin(CLIP_KEPT, """        opt.step()
        grad_norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm)
""", """        grad_norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        opt.step()
"""))
    assert fixed.norm() < 0.1 * 0.5 + 1e-5 < (-0.1 * g).norm()


# ----- ADL014: a plain class's attribute leaf written in place by another method ----

LEAF_METHOD = textwrap.dedent("""
    import torch


    class HandLinear:
        def __init__(self, n):
            self.weight = torch.zeros(n, requires_grad=True)
            self.bias = torch.zeros(1, requires_grad=True)

        def warm_start(self, offset):
            self.weight.add_(offset)
            return self

        def __call__(self, x):
            return x @ self.weight + self.bias


    def fit(x, y, offset=1.0):
        model = HandLinear(x.shape[1]).warm_start(offset)
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        return model.weight.grad
""")

# fresh shapes: an item assignment in a `reset` method called from a script's
# top level, and an augmented assignment in `perturb` called from a loop
LEAF_ITEM = textwrap.dedent("""
    import torch


    class Gate:
        def __init__(self):
            self.logits = torch.randn(4, requires_grad=True)

        def reset(self, k):
            self.logits[k] = 0.0

        def probs(self):
            return torch.softmax(self.logits, 0)


    gate = Gate()
    gate.reset(2)
    gate.probs()[0].backward()
""")

LEAF_AUG = textwrap.dedent("""
    import torch


    class Policy:
        def __init__(self, dim):
            self.theta = torch.zeros(dim, requires_grad=True)

        def perturb(self, noise):
            if noise is not None:
                self.theta += noise

        def score(self, s):
            return (s * self.theta).sum()


    def train(policy, states):
        for s in states:
            policy.perturb(0.01 * torch.randn_like(s))
            policy.score(s).backward()
""")


def test_attribute_leaf_written_in_another_method_is_reported():
    assert _codes(LEAF_METHOD) == [(_line_of(LEAF_METHOD, "self.weight.add_(offset)"), "ADL014")]
    assert _codes(LEAF_ITEM) == [(_line_of(LEAF_ITEM, "self.logits[k] = 0.0"), "ADL014")]
    assert _codes(LEAF_AUG) == [(_line_of(LEAF_AUG, "self.theta += noise"), "ADL014")]


def test_attribute_leaf_near_twins_are_silent():
    # the help applied: the write under no_grad
    under = _twin(LEAF_METHOD, "        self.weight.add_(offset)\n",
                  "        with torch.no_grad():\n            self.weight.add_(offset)\n")
    assert _codes(under) == []
    # the method decorated with no_grad
    decorated = _twin(LEAF_METHOD, "    def warm_start(self, offset):",
                      "    @torch.no_grad()\n    def warm_start(self, offset):")
    assert _codes(decorated) == []
    # the only call runs under no_grad
    called = _twin(LEAF_ITEM, "gate.reset(2)\n", "with torch.no_grad():\n    gate.reset(2)\n")
    assert _codes(called) == []
    # the attribute bound again elsewhere in the class: it may no longer be the leaf
    rebound = _twin(LEAF_AUG, "    def score(self, s):",
                    "    def detach_all(self):\n        self.theta = self.theta.detach()\n\n"
                    "    def score(self, s):")
    assert _codes(rebound) == []
    # no requires_grad: a constant
    plain = _twin(LEAF_ITEM, "torch.randn(4, requires_grad=True)", "torch.randn(4)")
    assert _codes(plain) == []
    # through .data: allowed by PyTorch (ADL004's business)
    data = _twin(LEAF_METHOD, "self.weight.add_(offset)", "self.weight.data.add_(offset)")
    assert _codes(data) == []
    # never called in the file: no evidence of gradients on
    uncalled = _twin(LEAF_METHOD, "HandLinear(x.shape[1]).warm_start(offset)", "HandLinear(x.shape[1])")
    assert _codes(uncalled) == []


def test_attribute_leaf_write_raises_and_the_help_fixes_it():
    x, y = torch.randn(5, 2), torch.randn(5)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        _namespace(LEAF_METHOD)["fit"](x, y)
    fixed = _twin(LEAF_METHOD, "        self.weight.add_(offset)\n",
                  "        with torch.no_grad():\n            self.weight.add_(offset)\n")
    grad = _namespace(fixed)["fit"](x, y)
    w = torch.ones(2, requires_grad=True)
    expected = torch.autograd.grad(((x @ w - y) ** 2).mean(), w)[0]
    assert torch.allclose(grad, expected)


# ----- ADL001: a value made from a plain class's attribute leaf -----------------------

SAVED_FROM_ATTRIBUTE = textwrap.dedent("""
    import torch


    class TwoStageScorer:
        def __init__(self):
            self.w1 = torch.tensor([[2.0], [1.0]], requires_grad=True)
            self.w2 = torch.tensor([9.0], requires_grad=True)

        def hidden(self, x):
            return torch.matmul(x, self.w1)

        def score(self, x):
            d = self.hidden(x)
            f = torch.matmul(d, self.w2)
            d[:] = 4
            return f

        def fit_step(self, x):
            f = self.score(x)
            f.backward()
            return self.w1.grad, self.w2.grad
""")

# fresh shapes: tanh keeps its output, zeroed in the same method; an embedding
# product whose input is scaled in place after `mul` saved it
SAVED_TANH = textwrap.dedent("""
    import torch


    class Squash:
        def __init__(self, n):
            self.a = torch.ones(n, requires_grad=True)

        def loss(self, x):
            s = torch.tanh(self.a * x)
            out = s.sum()
            s[0] = 0.0
            return out


    def step(model, x):
        model.loss(x).backward()
        return model.a.grad
""")

SAVED_MUL = textwrap.dedent("""
    import torch


    class Bilinear:
        def __init__(self, n):
            self.W = torch.randn(n, n, requires_grad=True)
            self.v = torch.randn(n, requires_grad=True)

        def embed(self, x):
            return x @ self.W

        def forward_loss(self, x):
            h = self.embed(x)
            z = h * self.v
            h.mul_(0.5)
            return z.sum()

        def train_step(self, x):
            loss = self.forward_loss(x)
            loss.backward()
""")


def test_write_to_a_value_made_from_an_attribute_leaf_is_reported():
    assert _codes(SAVED_FROM_ATTRIBUTE) == [(_line_of(SAVED_FROM_ATTRIBUTE, "d[:] = 4"), "ADL001")]
    assert _codes(SAVED_TANH) == [(_line_of(SAVED_TANH, "s[0] = 0.0"), "ADL001")]
    assert _codes(SAVED_MUL) == [(_line_of(SAVED_MUL, "h.mul_(0.5)"), "ADL001")]


def test_write_near_twins_are_silent():
    before = _twin(SAVED_FROM_ATTRIBUTE, """        f = torch.matmul(d, self.w2)
        d[:] = 4
""", """        d[:] = 4
        f = torch.matmul(d, self.w2)
""")
    assert _codes(before) == []
    cloned = _twin(SAVED_MUL, "        h.mul_(0.5)\n", "        h = h.clone()\n        h.mul_(0.5)\n")
    assert _codes(cloned) == []
    constant = _twin(_twin(SAVED_TANH, "torch.ones(n, requires_grad=True)", "torch.ones(n)"),
                     "model.loss(x).backward()", "model.loss(x)")
    assert _codes(constant) == []


def test_write_to_a_saved_value_raises_and_the_reorder_runs():
    x = torch.tensor([1.0, 3.0])
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _namespace(SAVED_FROM_ATTRIBUTE)["TwoStageScorer"]().fit_step(x)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _namespace(SAVED_TANH)["step"](_namespace(SAVED_TANH)["Squash"](3), torch.randn(3))
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _namespace(SAVED_MUL)["Bilinear"](3).train_step(torch.randn(3))
    fixed = _twin(SAVED_MUL, "        h.mul_(0.5)\n", "        h = h * 0.5\n")
    _namespace(fixed)["Bilinear"](3).train_step(torch.randn(3))
