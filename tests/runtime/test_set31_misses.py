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
# `y = x` inside the block binds the input itself, which reverse mode tracks as well: not a constant.
ALIAS_ONLY = """
import torch


def f(x):
    with torch.no_grad():
        y = x
    return torch.sin(y)


result = torch.func.jacfwd(f)(torch.randn(3))
"""
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
    assert diagnosis.help[0].corrects_forward_values
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
    for index, source in enumerate([NORMALISED_JACREV, CONSTANT_ONLY, ALREADY_DETACHED, ALIAS_ONLY, OUTSIDE_TRANSFORM]):
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


# AD101 on a `load_state_dict(...)` that restores weights after a forward run on weights loaded
# from tensors with a graph (set 31's MeLU#9): the report names the earlier load, says the graph
# stays behind, and advises a functional call. Other shapes: a Reptile-like inner step written as
# a module-level function with a dict comprehension of fast weights; a hypernetwork whose
# generated weights are loaded into a target network. Near-twins: the same restore after a load
# of plain (detached) values keeps AD101 without the note; the functional_call version is silent.
INNER_STEP = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)

net = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
meta = torch.optim.SGD(net.parameters(), lr=0.1)


def adapted_loss(xs, ys, xq, yq):
    backup = {k: v.clone() for k, v in net.state_dict().items()}
    params = dict(net.named_parameters())
    grads = torch.autograd.grad(F.mse_loss(net(xs), ys), list(params.values()), create_graph=True)
    fast = {k: v - 0.05 * g for (k, v), g in zip(params.items(), grads)}
    net.load_state_dict(fast)  # LOAD
    loss = F.mse_loss(net(xq), yq)
    net.load_state_dict(backup)  # RESTORE
    return loss


for step in range(2):
    xs, ys, xq, yq = torch.randn(5, 3), torch.randn(5, 1), torch.randn(5, 3), torch.randn(5, 1)
    loss = adapted_loss(xs, ys, xq, yq)
    meta.zero_grad()
    loss.backward()
    meta.step()
result = [p.detach().clone() for p in net.parameters()]
"""
INNER_STEP_FUNCTIONAL = INNER_STEP.replace(
    "    net.load_state_dict(fast)  # LOAD\n    loss = F.mse_loss(net(xq), yq)\n    net.load_state_dict(backup)  # RESTORE\n",
    "    loss = F.mse_loss(torch.func.functional_call(net, fast, (xq,)), yq)\n")
INNER_STEP_PLAIN = INNER_STEP.replace("net.load_state_dict(fast)  # LOAD",
                                      "net.load_state_dict({k: v.detach() for k, v in fast.items()})  # LOAD")

HYPERNET = """
import torch
import torch.nn as nn
torch.manual_seed(0)


class Hyper(nn.Module):
    def __init__(self, target):
        super().__init__()
        self.target = target
        self.gen = nn.Linear(2, 4 * 3 + 3)
        self.initial = {k: v.clone() for k, v in target.state_dict().items()}

    def forward(self, z, x):
        flat = self.gen(z)
        generated = {"weight": flat[:12].view(3, 4), "bias": flat[12:]}
        self.target.load_state_dict(generated)  # LOAD
        out = self.target(x)
        self.target.load_state_dict(self.initial)  # RESTORE
        return out


hyper = Hyper(nn.Linear(4, 3))
features = nn.Linear(5, 4)
out = hyper(torch.randn(2), features(torch.randn(6, 5)))
out.pow(2).sum().backward()
"""


def _ad101(tmp_path, source, name):
    path = write(tmp_path, textwrap.dedent(source), name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with autograd_doctor.watch():
                runpy.run_path(path, run_name="__main__")
        except RuntimeError as error:
            return [d for d in autograd_doctor.diagnoses_of(error) if d.code == "AD101"]
    return None


def test_a_restoring_load_after_a_load_of_graph_values_names_that_load(tmp_path):
    for index, source in enumerate([INNER_STEP, HYPERNET]):
        found = _ad101(tmp_path, source, f"shape{index}")
        assert found, source
        diagnosis = found[0]
        assert diagnosis.primary.line == line_of(source, "# RESTORE")
        assert any(loc.line == line_of(source, "# LOAD") and loc.role == "loaded" for loc in diagnosis.related)
        assert any("leaves the graph behind" in note for note in diagnosis.notes)
        assert "functional_call" in diagnosis.help[0].message and diagnosis.help[0].replacement is None


def test_a_restoring_load_after_plain_values_has_no_such_note_and_the_functional_twin_is_silent(tmp_path):
    found = _ad101(tmp_path, INNER_STEP_PLAIN, "plain")
    assert found
    assert not any("leaves the graph behind" in note for note in found[0].notes)
    assert all(loc.role != "loaded" for loc in found[0].related)
    assert _ad101(tmp_path, INNER_STEP_FUNCTIONAL, "functional") is None
    assert [d.code for d in warned(tmp_path, INNER_STEP_FUNCTIONAL, "functional_watched")] == []


def test_the_detach_help_is_judged_as_a_fix_of_a_forward_computed_value():
    from autograd_doctor.cli.meaning import judge

    before = {"events": [("backward", [torch.ones(2)]), ("backward", [torch.ones(2)])]}
    after = {"events": [("backward", [torch.zeros(2)]), ("backward", [torch.zeros(2)])]}
    assert judge(before, after, False, corrects_forward_values=True).status == "unverified"
    assert judge(before, after, False).status != "unverified"  # without the flag: other values
    fewer = {"events": [("backward", [torch.zeros(2)])]}
    assert judge(before, fewer, False, corrects_forward_values=True).status == "rejected"
