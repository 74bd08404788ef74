"""Set 31's misses (docs/bug-reports.md, "Set 31: misses worked on").

AD318: `torch.func.jvp` / `jacfwd` differentiate through a `with torch.no_grad():` block (forward-
mode AD does not honour grad mode), so a value the user marked as a constant contributes to the
Jacobian (set 31's pytorch#128600, a Jacobian-norm penalty through `jacfwd(functional_call(...))`).
The programs here are other shapes of that cause, written before the check was run on them: a
directional derivative (`jvp`) through a function that normalises by a norm computed under
`no_grad`, and a `jacfwd` over a module whose forward centres its features by a mean computed under
`no_grad` (a value that is not a call: the help needs parentheses). The oracle: the fixed program's
forward-mode derivative equals reverse mode's (`jacrev` / `vjp`) of the original, which honours
`no_grad`, and the hand-written version's. Near-twins that stay silent: the same blocks under
`jacrev`, a block that makes only constants, a block whose value is detached already, and a
`no_grad` block outside any transform."""

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


NORMALISED_JVP = """
import torch
torch.manual_seed(0)


def direction(x):
    with torch.no_grad():
        scale = x.norm(dim=-1, keepdim=True)  # MARK
    return torch.tanh(x) / scale


x = torch.randn(4, 5)
v = torch.randn(4, 5)
_, tangent = torch.func.jvp(direction, (x,), (v,))
_, pullback = torch.func.vjp(direction, x)
# reverse mode honours no_grad: the meaning the block states
result = {"tangent": tangent, "reverse": torch.func.jacrev(direction)(x[0]) @ v[0]}
"""
NORMALISED_JVP_ANSWER = NORMALISED_JVP.replace("keepdim=True)  # MARK", "keepdim=True).detach()  # MARK")

CENTRED_JACFWD = """
import torch
import torch.nn as nn
torch.manual_seed(0)


class Centred(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 6)

    def forward(self, x):
        h = self.fc(x)
        with torch.no_grad():
            centre = h - h.mean()  # MARK
        return torch.sin(h) - centre


model = Centred()
x = torch.randn(3)
result = {"jacfwd": torch.func.jacfwd(model)(x), "jacrev": torch.func.jacrev(model)(x)}
"""
CENTRED_JACFWD_ANSWER = CENTRED_JACFWD.replace("h - h.mean()  # MARK", "(h - h.mean()).detach()  # MARK")

# Near-twins: silent.
NORMALISED_JACREV = NORMALISED_JVP.replace(
    "_, tangent = torch.func.jvp(direction, (x,), (v,))", "tangent = torch.func.jacrev(direction)(x[0]) @ v[0]")
CONSTANT_ONLY = """
import torch


def f(x):
    with torch.no_grad():
        mask = torch.ones(3)
        mask[0] = 0.0
    return torch.sin(x) * mask


result = torch.func.jacfwd(f)(torch.randn(3))
"""
ALREADY_DETACHED = NORMALISED_JVP_ANSWER
OUTSIDE_TRANSFORM = """
import torch
w = torch.randn(3, requires_grad=True)
with torch.no_grad():
    scale = w.norm()
loss = (w / scale).sum()
loss.backward()
result = w.grad
"""


def test_jvp_through_a_no_grad_norm_is_named_and_the_detach_makes_it_match_reverse_mode(tmp_path):
    found = [d for d in warned(tmp_path, NORMALISED_JVP) if d.code == "AD318"]
    assert len(found) == 1
    diagnosis = found[0]
    assert diagnosis.primary.line == line_of(NORMALISED_JVP, "# MARK")
    assert "scale" in diagnosis.notes[0]
    assert diagnosis.help[0].replacement.strip() == "scale = x.norm(dim=-1, keepdim=True).detach()"
    original = result_of(tmp_path, NORMALISED_JVP, "original")
    assert not torch.allclose(original["tangent"][0], original["reverse"])  # the bug is real
    fixed = result_of(tmp_path, apply_suggestion(textwrap.dedent(NORMALISED_JVP), diagnosis.help[0]), "fixed")
    answer = result_of(tmp_path, NORMALISED_JVP_ANSWER, "answer")
    assert torch.allclose(fixed["tangent"], answer["tangent"])
    assert torch.allclose(fixed["tangent"][0], original["reverse"], atol=1e-6)


def test_jacfwd_through_a_no_grad_centring_wraps_the_expression(tmp_path):
    found = [d for d in warned(tmp_path, CENTRED_JACFWD) if d.code == "AD318"]
    assert len(found) == 1
    diagnosis = found[0]
    assert diagnosis.primary.line == line_of(CENTRED_JACFWD, "# MARK")
    assert diagnosis.help[0].replacement.strip() == "centre = (h - h.mean()).detach()"
    fixed = result_of(tmp_path, apply_suggestion(textwrap.dedent(CENTRED_JACFWD), diagnosis.help[0]), "fixed")
    answer = result_of(tmp_path, CENTRED_JACFWD_ANSWER, "answer")
    assert torch.allclose(fixed["jacfwd"], answer["jacfwd"])
    assert torch.allclose(fixed["jacfwd"], fixed["jacrev"], atol=1e-6)


def test_no_grad_blocks_that_forward_mode_does_not_differentiate_stay_silent(tmp_path):
    for index, source in enumerate([NORMALISED_JACREV, CONSTANT_ONLY, ALREADY_DETACHED, OUTSIDE_TRANSFORM]):
        assert [d.code for d in warned(tmp_path, source, f"twin{index}")] == []


def test_the_no_grad_exit_is_restored_and_behaviour_unchanged(tmp_path):
    exit_before = torch.autograd.grad_mode.no_grad.__exit__
    plain = result_of(tmp_path, CENTRED_JACFWD, "plain")
    warned(tmp_path, CENTRED_JACFWD, "watched")
    assert torch.autograd.grad_mode.no_grad.__exit__ is exit_before
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with autograd_doctor.watch():
            namespace = runpy.run_path(write(tmp_path, textwrap.dedent(CENTRED_JACFWD), "again"), run_name="__main__")
    assert torch.equal(namespace["result"]["jacfwd"], plain["jacfwd"])
