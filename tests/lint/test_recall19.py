"""Causes of the misses of the twentieth held-out set (r516-r530; docs/lint.md,
"A twentieth held-out set, written as real code is written (r516-r530)").

* ADL021, a grad-mode context manager called as a statement: `torch.no_grad()`
  (also `torch.enable_grad()`, `torch.inference_mode()`) only builds the
  context manager; nothing enters it, so gradients stay as they were for the
  lines below (min-dalle, r519).  `torch.set_grad_enabled(False)` and
  `torch.autograd.set_detect_anomaly(True)` act when called and stay silent.

The plain form and fresh programs in other shapes (written before the rule was
run on them), buggy -> a finding at the line, near twins that are correct
silent, and the claim run with torch."""

from __future__ import annotations

import textwrap

import pytest
import torch

from autograd_doctor.lint import lint_source


def _codes(source: str) -> list[tuple[int, str]]:
    return [(f.line, f.code) for f in lint_source(source, "recall19.py")]


def _namespace(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "recall19.py", "exec"), namespace)
    return namespace


def _line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


PLAIN = textwrap.dedent("""
    import torch

    def predict(model, x):
        model.eval()
        torch.no_grad()
        return model(x)
""")

# An evaluation helper of a trainer class; the statement before the loop.
EVALUATOR = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class Evaluator:
        def __init__(self, model, loader):
            self.model = model
            self.loader = loader

        def evaluate(self):
            self.model.eval()
            torch.inference_mode()
            outputs = []
            for x, y in self.loader:
                outputs.append(self.model(x))
            return torch.cat(outputs)
""")

# Imported under its own name; inside an `if`, in a sampling loop.
SAMPLER = textwrap.dedent("""
    from torch import no_grad
    import torch

    def sample(decoder, state, steps, fast=True):
        if fast:
            no_grad()
        tokens = []
        for _ in range(steps):
            logits = decoder(state)
            state = torch.tanh(logits)
            tokens.append(logits.argmax(-1))
        return tokens
""")

# `torch.enable_grad()` called in a function decorated with no_grad: gradients stay off.
REFINER = textwrap.dedent("""
    import torch

    @torch.no_grad()
    def refine(model, x, steps=3):
        x = x.clone()
        torch.enable_grad()
        x.requires_grad_(True)
        for _ in range(steps):
            energy = model(x).sum()
            (g,) = torch.autograd.grad(energy, x)
            x = x - 0.1 * g
        return x
""")


@pytest.mark.parametrize("source, text", [
    (PLAIN, "torch.no_grad()"),
    (EVALUATOR, "torch.inference_mode()"),
    (SAMPLER, "no_grad()"),
    (REFINER, "torch.enable_grad()"),
])
def test_adl021_grad_mode_statement_is_reported(source, text):
    line = next(i for i, l in enumerate(source.splitlines(), 1) if l.strip() == text)
    assert (line, "ADL021") in _codes(source)
    finding = next(f for f in lint_source(source, "recall19.py") if f.code == "ADL021" and f.line == line)
    assert "with " in finding.message and "thrown away" in finding.message


@pytest.mark.parametrize("source, old, new", [
    (PLAIN, "    torch.no_grad()\n    return model(x)", "    with torch.no_grad():\n        return model(x)"),
    (PLAIN, "    torch.no_grad()\n", "    torch.set_grad_enabled(False)\n"),
    (PLAIN, "    torch.no_grad()\n", "    ctx = torch.no_grad()\n    ctx.__enter__()\n"),
    (PLAIN, "    torch.no_grad()\n", "    torch.autograd.set_detect_anomaly(True)\n"),
    (PLAIN, "    torch.no_grad()\n", "    torch.inference_mode(mode=False).__enter__()\n"),
    (EVALUATOR, "    def evaluate(self):", "    @torch.inference_mode()\n    def evaluate(self):"),
    (SAMPLER, "        no_grad()\n", "        pass\n"),
])
def test_adl021_grad_mode_near_twins_are_silent(source, old, new):
    twin = source.replace(old, new)
    assert twin != source
    if "@torch.inference_mode()" in twin:
        twin = twin.replace("        torch.inference_mode()\n", "")
    assert not [c for c in _codes(twin) if c[1] == "ADL021"], twin


def test_adl021_grad_mode_statement_in_try_is_silent():
    source = PLAIN.replace("    torch.no_grad()\n", "    try:\n        torch.no_grad()\n    except TypeError:\n        pass\n")
    assert not [c for c in _codes(source) if c[1] == "ADL021"]


def test_adl021_grad_mode_claims_run_with_torch():
    model = torch.nn.Linear(3, 2)
    out = _namespace(PLAIN)["predict"](model, torch.randn(4, 3))
    assert out.requires_grad  # the statement did not turn gradients off
    fixed = PLAIN.replace("    torch.no_grad()\n    return model(x)",
                          "    with torch.no_grad():\n        return model(x)")
    out_fixed = _namespace(fixed)["predict"](model, torch.randn(4, 3))
    assert not out_fixed.requires_grad
    assert torch.equal(model(torch.ones(1, 3)).detach(), _namespace(fixed)["predict"](model, torch.ones(1, 3)))
    refined = _namespace(REFINER)
    with pytest.raises(RuntimeError):  # gradients stayed off: `energy` has no graph
        refined["refine"](torch.nn.Linear(3, 1), torch.randn(2, 3))
    assert torch.is_grad_enabled()
