"""Set 34's misses and the leftovers' rest (docs/bug-reports.md, "Set 34: misses worked on").

AD318 through nested transforms: `torch.func.hessian` is `jacfwd(jacrev(f))`, so inside `f` the
innermost transform is reverse mode (which honours `no_grad`) while the outer forward mode still
carries a tangent through the values a `with torch.no_grad():` block binds. The Hessian then counts
the derivative of a value the user marked as a constant, and differs from `jacrev(jacrev(f))`. The
recorder used to look at the innermost transform only. The programs here were written before the
change was run on them: a Hessian of an energy whose scale is computed under `no_grad`, and a
Hessian-vector product written as `jvp` over `grad` through a module that centres its features under
`no_grad`. The oracle: the fixed program's Hessian (or product) equals reverse-over-reverse of the
original (which honours `no_grad`) and the hand-written version's. Near-twins that stay silent:
reverse over reverse, the value detached already, a block that makes only constants, no block."""

import os
import runpy
import sys
import textwrap
import warnings

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "errors"))

from catalogue import apply_suggestion, run_plain, write  # noqa: E402

import autograd_doctor  # noqa: E402


def warned(tmp_path, source, name="program", **watch):
    path = write(tmp_path, textwrap.dedent(source), name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with autograd_doctor.watch(**watch) as doctor:
            runpy.run_path(path, run_name="__main__")
    return doctor.diagnoses


def result_of(tmp_path, source, name):
    error, namespace = run_plain(write(tmp_path, textwrap.dedent(source), name))
    assert error is None, error
    return namespace["result"]


def line_of(source, marker):
    return next(i for i, text in enumerate(textwrap.dedent(source).splitlines(), 1) if marker in text)


SCALED_ENERGY_HESSIAN = """
import torch
torch.manual_seed(0)


def energy(q):
    with torch.no_grad():
        temperature = q.pow(2).mean().sqrt()  # MARK
    return (torch.cos(q) * q).sum() / temperature


q = torch.randn(4, dtype=torch.float64)
result = {"hessian": torch.func.hessian(energy)(q),
          "reverse": torch.func.jacrev(torch.func.jacrev(energy))(q)}
"""
SCALED_ENERGY_ANSWER = SCALED_ENERGY_HESSIAN.replace("mean().sqrt()  # MARK", "mean().sqrt().detach()  # MARK")

CENTRED_HVP = """
import torch
import torch.nn as nn
torch.manual_seed(0)


class Centred(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 5).double()

    def forward(self, x):
        h = self.fc(x)
        with torch.no_grad():
            offset = h - h.mean()  # MARK
        return (torch.tanh(h) * offset).sum()


model = Centred()
x = torch.randn(3, dtype=torch.float64)
v = torch.randn(3, dtype=torch.float64)
_, hvp = torch.func.jvp(torch.func.grad(model), (x,), (v,))
result = {"hvp": hvp, "reverse": torch.func.jacrev(torch.func.grad(model))(x) @ v}
"""
CENTRED_HVP_ANSWER = CENTRED_HVP.replace("h - h.mean()  # MARK", "(h - h.mean()).detach()  # MARK")

# Near-twins: silent.
SCALED_ENERGY_REVERSE = SCALED_ENERGY_HESSIAN.replace(
    '"hessian": torch.func.hessian(energy)(q)', '"hessian": torch.func.jacrev(torch.func.jacrev(energy))(q)')
CONSTANT_ONLY_HESSIAN = """
import torch


def f(x):
    with torch.no_grad():
        weights = torch.arange(3.0)
    return (torch.sin(x) * weights).sum()


result = torch.func.hessian(f)(torch.randn(3))
"""
NO_BLOCK_HESSIAN = """
import torch


def f(x):
    scale = x.pow(2).mean().sqrt()
    return (torch.cos(x) * x).sum() / scale


result = torch.func.hessian(f)(torch.randn(3))
"""


def test_hessian_through_a_no_grad_block_is_named_and_the_detach_matches_reverse_over_reverse(tmp_path):
    found = [d for d in warned(tmp_path, SCALED_ENERGY_HESSIAN) if d.code == "AD318"]
    assert len(found) == 1
    diagnosis = found[0]
    assert diagnosis.primary.line == line_of(SCALED_ENERGY_HESSIAN, "# MARK")
    assert "temperature" in diagnosis.notes[0]
    assert "hessian" in diagnosis.notes[0]
    assert diagnosis.help[0].replacement.strip() == "temperature = q.pow(2).mean().sqrt().detach()"
    original = result_of(tmp_path, SCALED_ENERGY_HESSIAN, "original")
    assert not torch.allclose(original["hessian"], original["reverse"])  # the bug is real
    fixed = result_of(tmp_path, apply_suggestion(textwrap.dedent(SCALED_ENERGY_HESSIAN), diagnosis.help[0]), "fixed")
    answer = result_of(tmp_path, SCALED_ENERGY_ANSWER, "answer")
    assert torch.allclose(fixed["hessian"], answer["hessian"])
    assert torch.allclose(fixed["hessian"], original["reverse"])


def test_jvp_over_grad_through_a_no_grad_block_wraps_the_expression(tmp_path):
    found = [d for d in warned(tmp_path, CENTRED_HVP) if d.code == "AD318"]
    assert len(found) == 1
    diagnosis = found[0]
    assert diagnosis.primary.line == line_of(CENTRED_HVP, "# MARK")
    assert diagnosis.help[0].replacement.strip() == "offset = (h - h.mean()).detach()"
    original = result_of(tmp_path, CENTRED_HVP, "original")
    assert not torch.allclose(original["hvp"], original["reverse"])
    fixed = result_of(tmp_path, apply_suggestion(textwrap.dedent(CENTRED_HVP), diagnosis.help[0]), "fixed")
    answer = result_of(tmp_path, CENTRED_HVP_ANSWER, "answer")
    assert torch.allclose(fixed["hvp"], answer["hvp"])
    assert torch.allclose(fixed["hvp"], original["reverse"])


def test_nested_transforms_that_do_not_differentiate_the_block_stay_silent(tmp_path):
    for index, source in enumerate([SCALED_ENERGY_REVERSE, SCALED_ENERGY_ANSWER, CENTRED_HVP_ANSWER,
                                    CONSTANT_ONLY_HESSIAN, NO_BLOCK_HESSIAN]):
        assert [d.code for d in warned(tmp_path, source, f"twin{index}")] == [], index


def test_behaviour_unchanged_under_the_doctor(tmp_path):
    plain = result_of(tmp_path, SCALED_ENERGY_HESSIAN, "plain")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with autograd_doctor.watch():
            namespace = runpy.run_path(write(tmp_path, textwrap.dedent(SCALED_ENERGY_HESSIAN), "again"),
                                       run_name="__main__")
    assert torch.equal(namespace["result"]["hessian"], plain["hessian"])
    assert torch.equal(namespace["result"]["reverse"], plain["reverse"])


# A third shape, run after the change: hessian under vmap (per-example Hessians), the block's value
# made from the example and a closed-over weight. Near-twin: the block reads only the weight, which
# no transform differentiates (silent).
BATCHED_HESSIAN = """
import torch
torch.manual_seed(0)


def f(x, w):
    with torch.no_grad():
        s = (x * w).abs().max()  # MARK
    return (torch.sin(x) * s * w).sum()


w = torch.randn(3, dtype=torch.float64)
xs = torch.randn(5, 3, dtype=torch.float64)
result = {"hessian": torch.vmap(torch.func.hessian(f), in_dims=(0, None))(xs, w),
          "reverse": torch.vmap(torch.func.jacrev(torch.func.jacrev(f)), in_dims=(0, None))(xs, w)}
"""
BATCHED_WEIGHT_ONLY = BATCHED_HESSIAN.replace("(x * w).abs().max()", "w.abs().max()")


def test_per_example_hessians_under_vmap(tmp_path):
    found = [d for d in warned(tmp_path, BATCHED_HESSIAN) if d.code == "AD318"]
    assert len(found) == 1
    assert found[0].primary.line == line_of(BATCHED_HESSIAN, "# MARK")
    original = result_of(tmp_path, BATCHED_HESSIAN, "original")
    assert not torch.allclose(original["hessian"], original["reverse"])
    fixed = result_of(tmp_path, apply_suggestion(textwrap.dedent(BATCHED_HESSIAN), found[0].help[0]), "fixed")
    assert torch.allclose(fixed["hessian"], original["reverse"])
    assert [d.code for d in warned(tmp_path, BATCHED_WEIGHT_ONLY, "twin")] == []
