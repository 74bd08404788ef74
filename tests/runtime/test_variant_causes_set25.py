"""Causes found by held-out variants set 25 (docs/errors.md, "Held-out variants", set 25), each tested on
another program of the same cause (not the variant) and on a correct near-twin.

AD308: the `.grad` read of an attribute computed anew at each access (a parametrized `layer.weight`, a
@property that computes from one parameter), read after backward(), got `retain_grad()` on the tensor
read: that tensor is made at the read, after backward() ran, so the changed program failed the same way
(a wrong help). The leaf it is computed from is the one whose .grad backward() filled: the help reads it.
A tensor read from the attribute BEFORE backward() (it is in the graph) keeps the retain_grad help."""

from __future__ import annotations

import torch

from helpers import apply_help, run_as_script, run_plain

# A @property that computes a temperature from its log, read directly on the failing line by a logging
# helper after backward().
PROPERTY_GRAD_LOGGED = """
    import torch
    from torch import nn

    class Scorer(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(3, 2)
            self.log_temperature = nn.Parameter(torch.tensor(0.5))

        @property
        def temperature(self):
            return self.log_temperature.exp()

        def forward(self, x):
            return self.proj(x) / self.temperature

    def grad_report(model, scale):
        return scale * model.temperature.grad  # READ

    torch.manual_seed(0)
    model = Scorer()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(5, 3), torch.tensor([0, 1, 1, 0, 1])
    reports = []
    for step in range(2):
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        reports.append(grad_report(model, 2.0))
        optimizer.step()
    reports = torch.stack(reports)
    final = model.log_temperature.detach().clone()
"""

PROPERTY_GRAD_LOGGED_CORRECT = PROPERTY_GRAD_LOGGED.replace(
    "scale * model.temperature.grad  # READ", "scale * model.log_temperature.grad  # READ")

# The parametrized weight read into a name BEFORE backward() and used in the loss: it is in the graph,
# so retain_grad() is right, and the leaf's gradient is another value (not the help).
PARAMETRIZED_WEIGHT_IN_GRAPH = """
    import torch
    from torch import nn
    from torch.nn.utils.parametrizations import orthogonal

    torch.manual_seed(0)
    layer = orthogonal(nn.Linear(3, 3))
    x = torch.randn(4, 3)
    weight = layer.weight
    loss = (x @ weight.T).pow(2).sum()
    loss.backward()
    norm = 0.5 * weight.grad  # READ
"""


def test_a_property_read_after_backward_reads_the_parameter_it_is_computed_from(tmp_path):
    outcome = run_as_script(tmp_path, PROPERTY_GRAD_LOGGED)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD308", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("READ")
    assert "retain_grad" not in (diagnosis.help[0].replacement or ""), diagnosis.help[0]
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    correct = run_plain(tmp_path, PROPERTY_GRAD_LOGGED_CORRECT, "correct.py")
    for name in ("reports", "final"):
        assert torch.equal(fixed[name], correct[name]), name


def test_the_parameter_read_stays_silent(tmp_path):
    outcome = run_as_script(tmp_path, PROPERTY_GRAD_LOGGED_CORRECT)
    assert outcome.error is None and not outcome.diagnoses


def test_a_parametrized_weight_read_before_backward_keeps_retain_grad(tmp_path):
    outcome = run_as_script(tmp_path, PARAMETRIZED_WEIGHT_IN_GRAPH)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD308", [d.code for d in outcome.diagnoses]
    assert "parametrizations" not in (diagnosis.help[0].replacement or ""), diagnosis.help[0]
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    assert fixed["norm"].shape == (3, 3)


# AD236: a tangent whose size is the primal's with its dimensions in another order ([batch, steps, dim]
# for nn.MultiheadAttention's [steps, batch, dim]) got `view_as(primal)`, said to keep "the same order":
# it keeps the memory order, so each entry moves another element than the one it was drawn for (a wrong
# help). Where the sizes are all different the layout is known: the dimensions are reordered. A flat
# direction (another number of dimensions) keeps view_as.
CHANNELS_LAST_DIRECTION = """
    import torch
    from torch import nn
    import torch.autograd.forward_ad as fwAD

    torch.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(3, 2, 3), nn.Tanh(), nn.Flatten(), nn.Linear(2 * 3 * 2, 1))
    images = torch.randn(2, 3, 5, 4)
    pattern = torch.randn(2, 5, 4, 3)
    with fwAD.dual_level():
        dual = fwAD.make_dual(images, pattern)  # DUAL
        response = fwAD.unpack_dual(net(dual)).tangent
"""

CHANNELS_LAST_DIRECTION_CORRECT = CHANNELS_LAST_DIRECTION.replace(
    "fwAD.make_dual(images, pattern)  # DUAL", "fwAD.make_dual(images, pattern.permute(0, 3, 1, 2))  # DUAL")

FLAT_DIRECTION = """
    import torch
    from torch import nn
    from torch.func import jvp

    torch.manual_seed(0)
    net = nn.Linear(3, 2)
    x = torch.randn(4, 3)
    flat = torch.randn(12)
    _, change = jvp(net, (x,), (flat,))  # JVP
"""


def test_a_tangent_in_another_layout_is_reordered(tmp_path):
    outcome = run_as_script(tmp_path, CHANNELS_LAST_DIRECTION)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD236", [d.code for d in outcome.diagnoses]
    concrete = [h for h in diagnosis.help if h.location is not None]
    assert concrete and "view_as" not in concrete[0].replacement, concrete[0]
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    correct = run_plain(tmp_path, CHANNELS_LAST_DIRECTION_CORRECT, "correct.py")
    assert torch.equal(fixed["response"], correct["response"])


def test_the_reordered_tangent_stays_silent(tmp_path):
    outcome = run_as_script(tmp_path, CHANNELS_LAST_DIRECTION_CORRECT)
    assert outcome.error is None and not outcome.diagnoses


def test_a_flat_tangent_keeps_view_as(tmp_path):
    outcome = run_as_script(tmp_path, FLAT_DIRECTION)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD236", [d.code for d in outcome.diagnoses]
    assert "flat.view_as(x)" in diagnosis.help[0].replacement, diagnosis.help[0]


# AD234: a transform called with has_aux=True (jvp, vjp, grad, ...) whose function returns its output
# alone got advice, and a lambda wrapping a method (`lambda p: self.log_probs(p, obs)`) was not followed
# to the method, so jvp's spelling of the message went undiagnosed. Where the call's result is unpacked
# into names whose last one (the aux) is never read, the call without has_aux=True and without that name
# is the change; an aux that is read keeps the advice.
GRAD_AUX_NEVER_READ = """
    import torch
    from torch.func import grad

    def loss_fn(w, x, y):
        return ((x @ w - y) ** 2).mean()

    torch.manual_seed(0)
    w = torch.randn(3)
    x, y = torch.randn(8, 3), torch.randn(8)
    for step in range(3):
        g, metrics = grad(loss_fn, has_aux=True)(w, x, y)  # CALL
        w = w - 0.1 * g
    final = w
"""

GRAD_AUX_NEVER_READ_CORRECT = GRAD_AUX_NEVER_READ.replace(
    "g, metrics = grad(loss_fn, has_aux=True)(w, x, y)  # CALL", "g = grad(loss_fn)(w, x, y)  # CALL")

GRAD_AUX_READ = GRAD_AUX_NEVER_READ.replace("        w = w - 0.1 * g\n", "        w = w - 0.1 * g\n        print(metrics)\n")


def test_an_aux_never_read_is_dropped_at_the_call(tmp_path):
    outcome = run_as_script(tmp_path, GRAD_AUX_NEVER_READ)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD234", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("CALL")
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    correct = run_plain(tmp_path, GRAD_AUX_NEVER_READ_CORRECT, "correct.py")
    assert torch.equal(fixed["final"], correct["final"])


def test_the_call_without_aux_stays_silent(tmp_path):
    outcome = run_as_script(tmp_path, GRAD_AUX_NEVER_READ_CORRECT)
    assert outcome.error is None and not outcome.diagnoses


def test_an_aux_that_is_read_keeps_the_advice(tmp_path):
    outcome = run_as_script(tmp_path, GRAD_AUX_READ)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD234", [d.code for d in outcome.diagnoses]
    assert all(h.location is None for h in diagnosis.help), diagnosis.help


# AD303: a deep copy made by library code that bound `copy.deepcopy` when it was imported
# (torch.optim.swa_utils.AveragedModel does `from copy import deepcopy`) was not seen by the recorder, and
# the error had no diagnosis. The traceback's copy frame holds the object copied; the diagnosis is a
# direct deepcopy's, named from the user's call (here an EMA made with get_ema_multi_avg_fn, of a model
# whose submodule keeps a table computed from a parameter in __init__).
EMA_OF_MODEL_WITH_COMPUTED_TABLE = """
    import torch
    from torch import nn
    from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn

    class Rotary(nn.Module):
        def __init__(self):
            super().__init__()
            self.log_freqs = nn.Parameter(torch.zeros(2))
            self.freqs = self.log_freqs.exp()  # STORED

        def forward(self, x):
            return x * torch.cos(self.log_freqs.exp())

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.rotary = Rotary()
            self.head = nn.Linear(2, 1)

        def forward(self, x):
            return self.head(self.rotary(x))

    torch.manual_seed(0)
    net = Net()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    x, y = torch.randn(5, 2), torch.randn(5, 1)
    ema = AveragedModel(net, multi_avg_fn=get_ema_multi_avg_fn(0.9))  # COPY
    for step in range(3):
        loss = nn.functional.mse_loss(net(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        ema.update_parameters(net)
    averaged = [p.detach().clone() for p in ema.parameters()]
"""

EMA_OF_MODEL_WITH_COMPUTED_TABLE_CORRECT = EMA_OF_MODEL_WITH_COMPUTED_TABLE.replace(
    "self.freqs = self.log_freqs.exp()  # STORED", "self.freqs = self.log_freqs.exp().detach()  # STORED")


def test_a_deepcopy_inside_a_library_call_is_diagnosed(tmp_path):
    outcome = run_as_script(tmp_path, EMA_OF_MODEL_WITH_COMPUTED_TABLE)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD303", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("COPY")
    assert diagnosis.extra["non_leaf_paths"] == ["net.rotary.freqs"]
    assert diagnosis.help[0].location.line == outcome.line("STORED")
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    correct = run_plain(tmp_path, EMA_OF_MODEL_WITH_COMPUTED_TABLE_CORRECT, "correct.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["averaged"], correct["averaged"]))


def test_the_ema_of_a_model_without_graph_tensors_stays_silent(tmp_path):
    outcome = run_as_script(tmp_path, EMA_OF_MODEL_WITH_COMPUTED_TABLE_CORRECT)
    assert outcome.error is None and not outcome.diagnoses
