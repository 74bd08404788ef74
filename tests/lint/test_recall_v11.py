"""Recall on the causes of misses in the r270-r289 re-creations: each case the
linter now reports really shows its bug when run, its corrected twin stays
silent and computes what a reference computes, and a similar correct pattern
stays silent (and really runs)."""

from __future__ import annotations

import textwrap

import torch

from autograd_doctor.lint import lint_source


def _load(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "case.py", "exec"), namespace)
    return namespace


def _findings(source: str) -> list[tuple[int, str]]:
    return sorted((f.line, f.code) for f in lint_source(source, "case.py"))


def _line(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


# A hand-written attack on a tensor the function makes: `opt.zero_grad()` (the
# optimizer handed in) clears the model's gradients between the steps, never
# `delta`'s, so `delta.grad` holds the sum of every step's gradient.  The
# attack's step size is zero (`alpha=0.`) so that every step's own gradient is
# the first one, which makes the sum visible.
ATTACK_WITH_ONLY_THE_MODELS_GRADIENTS_CLEARED = textwrap.dedent("""
    import torch
    import torch.nn as nn

    def attack(model, opt, x, y, alpha, steps, seen):
        delta = torch.zeros_like(x)
        for _ in range(steps):
            delta.requires_grad = True
            loss = nn.functional.cross_entropy(model(x + delta), y)
            opt.zero_grad()
            loss.backward()
            grad = delta.grad.detach()
            seen.append(grad.clone())
            delta.data = delta.data + alpha * grad.sign()
        return delta.detach()

    def main():
        torch.manual_seed(0)
        model = nn.Linear(4, 3)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        x, y = torch.randn(5, 4), torch.tensor([0, 1, 2, 0, 1])
        seen = []
        attack(model, opt, x, y, 0., 2, seen)
        return seen
""")


def test_attack_gradient_piling_up_behind_another_optimizers_zero_grad_is_found():
    source = ATTACK_WITH_ONLY_THE_MODELS_GRADIENTS_CLEARED
    assert _findings(source) == [(_line(source, "grad = delta.grad.detach()"), "ADL018")]
    seen = _load(source)["main"]()
    assert torch.allclose(seen[1], 2 * seen[0])  # the second step reads both gradients


def test_attack_that_clears_delta_grad_is_silent_and_reads_one_gradient():
    source = ATTACK_WITH_ONLY_THE_MODELS_GRADIENTS_CLEARED.replace(
        "        opt.zero_grad()\n",
        "        opt.zero_grad()\n        delta.grad = None\n")
    assert "delta.grad = None" in source
    assert _findings(source) == []
    seen = _load(source)["main"]()
    assert torch.equal(seen[1], seen[0])  # alpha = 0: each step reads its own gradient only


def test_attack_whose_optimizer_holds_delta_is_silent():
    """An optimizer made over `delta` clears it: its `zero_grad()` counts."""
    source = textwrap.dedent("""
        import torch
        import torch.nn as nn

        def attack(model, x, y, steps):
            delta = torch.zeros_like(x, requires_grad=True)
            opt = torch.optim.SGD([delta], lr=0.1)
            for _ in range(steps):
                loss = -nn.functional.cross_entropy(model(x + delta), y)
                opt.zero_grad()
                loss.backward()
                grad = delta.grad.detach()
                delta.data = delta.data + 0.01 * grad.sign()
            return delta.detach()

        def main():
            torch.manual_seed(0)
            return attack(nn.Linear(4, 3), torch.randn(5, 4), torch.tensor([0, 1, 2, 0, 1]), 3)
    """)
    assert _findings(source) == []
    assert _load(source)["main"]().shape == (5, 4)


def test_attack_on_a_tensor_handed_in_is_silent():
    """The caller's tensor may be among the handed-in optimizer's parameters."""
    source = textwrap.dedent("""
        import torch
        import torch.nn as nn

        def attack(model, opt, x, y, delta, steps):
            for _ in range(steps):
                loss = -nn.functional.cross_entropy(model(x + delta), y)
                opt.zero_grad()
                loss.backward()
                grad = delta.grad.detach()
                delta.data = delta.data + 0.01 * grad.sign()
            return delta.detach()

        def main():
            torch.manual_seed(0)
            model = nn.Linear(4, 3)
            delta = torch.zeros(5, 4, requires_grad=True)
            opt = torch.optim.SGD(list(model.parameters()) + [delta], lr=0.1)
            return attack(model, opt, torch.randn(5, 4), torch.tensor([0, 1, 2, 0, 1]), delta, 3)
    """)
    assert _findings(source) == []
    assert _load(source)["main"]().shape == (5, 4)
