"""Sets 28-30's leftovers (docs/bug-reports.md, "Sets 28-30: leftovers worked on").

AD115 on `t.requires_grad_(False)` (or `t.requires_grad = False`) of a computed tensor inside a
helper whose caller holds the same tensor and goes on computing from it (set 30's
responsible-ai-toolbox#24: `with frozen(data, ...)` in a solver that then backpropagates
`pmodel(data)` several times). The helper's own `t = t.detach()` ran on, and the caller's graph
was backpropagated twice. The help now makes the caller's copy before the call. The programs here
are other shapes of that cause, written before the change was run on them: a feature-space attack
that freezes its input with a loop helper, and a linear probe whose method switches the flag off
by attribute assignment. Their near-twins: the caller detaches already (silent), and a helper
whose caller does not use the tensor again (the helper's own copy stays the help).

AD307 first: a grad-off decorator found by the catalogue is attached after the recorder's AD301
(a refinement, `ADDS_TO_EXISTING`), so the first diagnosis a user read (and the one the measure
takes) named the backward() line, not the decorator (set 29's replicate/cog#1681). A refinement
whose first help is a change at another line than the refined diagnosis's now leads, in the
exception's notes, `diagnoses_of(error)` and the CLI's report; AD301 follows unchanged. Other
shapes: a `@torch.no_grad()` embedding method called on the loss's line, and an
`@torch.inference_mode()` training method of a class, run through the CLI (its JSON report).
The near-twin: an AD301 with no decorator (nothing leads, AD301 stays first)."""

import json
import os

import torch

from autograd_doctor.analysis.fixes import apply_replacement
from helpers import run_as_script, run_cli, run_plain

FEATURE_ATTACK = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)


def freeze(*tensors):
    for t in tensors:
        t.requires_grad_(False)  # FLAG


def attack(head, z, y, steps=4, eps=0.3):
    delta = torch.zeros_like(z, requires_grad=True)
    freeze(z, y)  # CALL
    for _ in range(steps):
        loss = -F.cross_entropy(head(z + delta), y)
        loss.backward()
        with torch.no_grad():
            delta -= 0.1 * delta.grad.sign()
            delta.clamp_(-eps, eps)
            delta.grad = None
    return (z + delta).detach()


encoder, head = nn.Sequential(nn.Linear(5, 8), nn.Tanh()), nn.Linear(8, 3)
head.requires_grad_(True)
optimizer = torch.optim.SGD(list(encoder.parameters()) + list(head.parameters()), lr=0.1)
losses = []
for step in range(3):
    x, y = torch.randn(10, 5), torch.randint(0, 3, (10,))
    z = encoder(x)
    z_adv = attack(head, z, y)
    loss = F.cross_entropy(head(z), y) + F.cross_entropy(head(z_adv), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in optimizer.param_groups[0]["params"]]}
"""
# The hand-written correct version: the attack works on a detached copy of the features.
FEATURE_ATTACK_ANSWER = FEATURE_ATTACK.replace(
    "    delta = torch.zeros_like(z, requires_grad=True)\n",
    "    z = z.detach()\n    delta = torch.zeros_like(z, requires_grad=True)\n")
# Near-twin: the caller gives the attack a detached copy already.
FEATURE_ATTACK_TWIN = FEATURE_ATTACK.replace("z_adv = attack(head, z, y)", "z_adv = attack(head, z.detach(), y)")

PROBE = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)


class Probe:
    def __init__(self, width, classes):
        self.linear = nn.Linear(width, classes)
        self.optimizer = torch.optim.SGD(self.linear.parameters(), lr=0.2)

    def _stop(self, h):
        h.requires_grad = False  # FLAG

    def fit(self, h, y, steps=5):
        self._stop(h)  # CALL
        for _ in range(steps):
            self.optimizer.zero_grad()
            F.cross_entropy(self.linear(h), y).backward()
            self.optimizer.step()
        return F.cross_entropy(self.linear(h), y).detach()


backbone = nn.Sequential(nn.Linear(6, 7), nn.ReLU())
probe = Probe(7, 2)
x, y = torch.randn(12, 6), torch.randint(0, 2, (12,))
h = backbone(x)
probe_loss = probe.fit(h, y)
result = {"probe_loss": probe_loss, "w": probe.linear.weight.detach().clone(), "h": h.detach()}
"""
PROBE_ANSWER = PROBE.replace("        self._stop(h)  # CALL\n", "        h = h.detach()\n        self._stop(h)  # CALL\n")
# Near-twin: the flag is switched off in the function that trains on the tensor, and its caller only
# passes the tensor on (a copy made where the flag is set reaches every use): the helper's own copy
# stays the first help, and applied, it equals the hand-written version.
PROBE_IN_PLACE = PROBE.replace(
    "    def fit(self, h, y, steps=5):\n        self._stop(h)  # CALL\n",
    "    def fit(self, h, y, steps=5):\n        return self._fit(h, y, steps)\n\n"
    "    def _fit(self, h, y, steps):\n        h.requires_grad = False  # OWN\n")
PROBE_IN_PLACE_ANSWER = PROBE_IN_PLACE.replace("h.requires_grad = False  # OWN", "h = h.detach()  # OWN")


def _ad115(outcome):
    return next(d for d in outcome.diagnoses if d.code == "AD115")


def _same(got, want):
    for key, value in want.items():
        if isinstance(value, list):
            assert all(torch.equal(a, b) for a, b in zip(got[key], value)), key
        else:
            assert torch.equal(got[key], value), key


def _check_caller_help(tmp_path, source, answer, name):
    outcome = run_as_script(tmp_path, source)
    found = _ad115(outcome)
    assert found.primary.line == outcome.line("CALL")
    assert outcome.line("FLAG") in [r.line for r in found.related]
    help_ = found.help[0]
    assert help_.replacement.splitlines()[0] == f"{name} = {name} if {name}.is_leaf else {name}.detach()"
    fixed = apply_replacement(outcome.source, help_.location, help_.replacement)
    _same(run_plain(tmp_path, fixed, name="fixed.py")["result"], run_plain(tmp_path, answer, name="answer.py")["result"])
    # the helper's own copy follows, as the second help
    assert found.help[1].location.line == outcome.line("FLAG")


def test_a_frozen_feature_batch_is_detached_at_the_caller(tmp_path):
    _check_caller_help(tmp_path, FEATURE_ATTACK, FEATURE_ATTACK_ANSWER, "z")


def test_a_probe_input_switched_off_by_attribute_is_detached_at_the_caller(tmp_path):
    _check_caller_help(tmp_path, PROBE, PROBE_ANSWER, "h")


def test_near_twins(tmp_path):
    assert run_as_script(tmp_path, FEATURE_ATTACK_TWIN).diagnoses == []
    assert run_as_script(tmp_path, PROBE_ANSWER).diagnoses == []
    outcome = run_as_script(tmp_path, PROBE_IN_PLACE)
    found = _ad115(outcome)
    assert found.primary.line == outcome.line("OWN")
    assert found.help[0].replacement == "h = h.detach()"
    fixed = apply_replacement(outcome.source, found.help[0].location, found.help[0].replacement)
    _same(run_plain(tmp_path, fixed, name="fixed.py")["result"],
          run_plain(tmp_path, PROBE_IN_PLACE_ANSWER, name="answer.py")["result"])


EMBED = """
import torch
import torch.nn as nn
torch.manual_seed(0)


class Embedder(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 6)

    @torch.no_grad()  # DECORATOR
    def embed(self, x):
        return torch.tanh(self.proj(x))


model = Embedder()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, target = torch.randn(5, 4), torch.randn(5, 6)
loss = (model.embed(x) - target).pow(2).mean()
loss.backward()
optimizer.step()
result = {"loss": loss.detach(), "w": model.proj.weight.detach().clone()}
"""
EMBED_ANSWER = EMBED.replace("    @torch.no_grad()  # DECORATOR\n", "")
# Near-twin of the reporting order: the path cut by a detach(), no decorator: AD301 alone.
EMBED_DETACHED = EMBED_ANSWER.replace("return torch.tanh(self.proj(x))", "return torch.tanh(self.proj(x)).detach()")

TRAINER = """
import torch
import torch.nn as nn
torch.manual_seed(0)


class Trainer:
    def __init__(self):
        self.model = nn.Linear(3, 1)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.05)

    @torch.inference_mode()  # DECORATOR
    def train_step(self, x, y):
        self.optimizer.zero_grad()
        loss = (self.model(x).squeeze(-1) - y).abs().mean()
        loss.backward()
        self.optimizer.step()
        return loss.detach().clone()


trainer = Trainer()
losses = torch.stack([trainer.train_step(torch.randn(8, 3), torch.randn(8)) for _ in range(3)])
result = {"losses": losses, "w": trainer.model.weight.detach().clone()}
"""
TRAINER_ANSWER = TRAINER.replace("    @torch.inference_mode()  # DECORATOR\n", "")


def test_a_decorator_found_after_ad301_leads(tmp_path):
    outcome = run_as_script(tmp_path, EMBED)
    codes = [d.code for d in outcome.diagnoses]
    assert codes[0] == "AD307" and "AD301" in codes
    assert outcome.diagnoses[0].primary.line == outcome.line("DECORATOR")
    notes = [n for n in outcome.error.__notes__ if n.startswith("autograd-doctor:")]
    assert "AD307" in notes[0] and "AD301" in notes[1]
    help_ = outcome.diagnoses[0].help[0]
    fixed = apply_replacement(outcome.source, help_.location, help_.replacement)
    _same(run_plain(tmp_path, fixed, name="fixed.py")["result"], run_plain(tmp_path, EMBED_ANSWER, name="answer.py")["result"])


def test_the_cli_report_leads_with_the_decorator(tmp_path):
    script = tmp_path / "trainer.py"
    script.write_text(TRAINER)
    report_path = tmp_path / "report.json"
    env = {"PYTHONPATH": os.pathsep.join(p for p in (os.environ.get("PYTHONPATH", ""),) if p)}
    result = run_cli("run", "--no-rerun", "--json", str(report_path), str(script), env=env, timeout=300)
    assert result.returncode != 0
    diagnoses = json.loads(report_path.read_text())["diagnoses"]
    decorator_line = TRAINER.splitlines().index("    @torch.inference_mode()  # DECORATOR") + 1
    assert diagnoses[0]["code"] == "AD307" and diagnoses[0]["primary"]["line"] == decorator_line
    assert any(d["code"] == "AD301" for d in diagnoses[1:])


def test_no_decorator_no_lead(tmp_path):
    outcome = run_as_script(tmp_path, EMBED_DETACHED)
    assert outcome.diagnoses and outcome.diagnoses[0].code == "AD301"
    assert all(d.code != "AD307" for d in outcome.diagnoses)
    assert run_as_script(tmp_path, EMBED_ANSWER).diagnoses == []


# AD151 at the call that cast the trained parameters (set 28's diffusers PR 13895: a validation
# pipeline's `.to(device, dtype=torch.float16)` forwarded to the shared UNet). recording/module_casts.py
# notes which parameters a `Module.to/half/bfloat16` call turned into half precision, with the user's
# stack; AD151 names the call that chose the dtype. Other shapes: a wrapper whose `to()` forwards its
# `dtype=` keyword to the trained network, called in the loop (the caller's line, `dtype=` dropped),
# and an export helper that halves the trained model itself (its `.half()` line named, advice).
# Near-twins: the export made from a deepcopy, and a wrapper moved without a dtype: silent.
WRAPPER = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)


class Served:
    def __init__(self, net):
        self.net = net

    def to(self, device, dtype=None):
        self.net.to(device=device, dtype=dtype)
        return self

    def __call__(self, x):
        with torch.no_grad(), torch.autocast("cpu", dtype=torch.float16):
            return self.net(x).float()


net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
optimizer = torch.optim.Adam(net.parameters(), lr=1e-2)
scaler = torch.amp.GradScaler("cpu")
served = Served(net)
losses, previews = [], []
for step in range(3):
    x, y = torch.randn(6, 4), torch.randn(6, 2)
    with torch.autocast("cpu", dtype=torch.float16):
        loss = F.mse_loss(net(x).float(), y)
    optimizer.zero_grad()
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    scaler.step(optimizer)
    scaler.update()
    losses.append(loss.item())
    previews.append(served.to("cpu", dtype=torch.float16)(torch.ones(1, 4)))  # CAST
result = {"losses": torch.tensor(losses), "previews": torch.cat(previews), "params": [p.detach().clone() for p in net.parameters()]}
"""
WRAPPER_ANSWER = WRAPPER.replace('served.to("cpu", dtype=torch.float16)', 'served.to("cpu")')

EXPORT = """
import copy
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)


def export_half(model):
    return model.half()  # HALF


net = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 1))
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cpu")
exported = []
for step in range(3):
    x, y = torch.randn(4, 3), torch.randn(4, 1)
    with torch.autocast("cpu", dtype=torch.float16):
        loss = F.mse_loss(net(x).float(), y)
    optimizer.zero_grad()
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    scaler.step(optimizer)
    scaler.update()
    exported.append(export_half(net))
result = {"params": [p.detach().clone() for p in net.parameters()]}
"""
EXPORT_TWIN = EXPORT.replace("return model.half()  # HALF", "return copy.deepcopy(model).half()  # HALF")


def _ad151(outcome):
    return next(d for d in outcome.diagnoses if d.code == "AD151")


def test_a_wrapper_forwarding_dtype_names_the_caller(tmp_path):
    outcome = run_as_script(tmp_path, WRAPPER)
    found = _ad151(outcome)
    assert found.primary.line == outcome.line("CAST")
    help_ = found.help[0]
    assert help_.replacement is not None and "dtype" not in help_.replacement
    fixed = apply_replacement(outcome.source, help_.location, help_.replacement)
    _same(run_plain(tmp_path, fixed, name="fixed.py")["result"], run_plain(tmp_path, WRAPPER_ANSWER, name="answer.py")["result"])


def test_an_export_helper_halving_the_trained_model_is_named(tmp_path):
    outcome = run_as_script(tmp_path, EXPORT)
    found = _ad151(outcome)
    assert found.primary.line == outcome.line("HALF")
    assert all(not s.replacement for s in found.help)


def test_casts_of_copies_and_without_dtype_are_silent(tmp_path):
    assert run_as_script(tmp_path, EXPORT_TWIN).diagnoses == []
    assert run_as_script(tmp_path, WRAPPER_ANSWER).diagnoses == []


def test_the_cast_recorder_is_transparent_and_restored():
    import autograd_doctor
    from autograd_doctor.recording import module_casts

    originals = {name: torch.nn.Module.__dict__[name] for name in ("to", "half", "bfloat16")}
    plain = torch.nn.Linear(3, 2)
    with autograd_doctor.watch():
        model = torch.nn.Linear(3, 2)
        model.load_state_dict(plain.state_dict())
        weight = model.weight
        assert model.half() is model and model.weight is weight and weight.dtype == torch.float16
        assert model.to(torch.float32) is model and weight.dtype == torch.float32
        assert model.to("cpu", dtype=torch.bfloat16) is model and weight.dtype == torch.bfloat16
        assert module_casts.last_cast_of({id(weight)}).dtype == torch.bfloat16
    assert {name: torch.nn.Module.__dict__[name] for name in originals} == originals
    plain.half().to(torch.float32).to("cpu", dtype=torch.bfloat16)  # the same casts without the doctor
    assert torch.equal(model.weight, plain.weight) and torch.equal(model.bias, plain.bias)
    # only weak references are kept: the cast parameters are not held alive
    import gc
    import weakref
    kept = weakref.ref(model.weight)
    del weight, model
    gc.collect()
    assert kept() is None


# AD206 for a loss term made from gradients that torch.autograd.grad returned without
# create_graph=True, followed through loops and lists (set 29's DomainBed#50: IGA's per-environment
# gradients appended to a list, then zipped with the mean gradient; number_terms.py follows plain
# assignments only). Other shapes: an input-gradient ("double backprop") regularizer in a training
# function (plain assignments: number_terms.py's own route), and a gradient-norm penalty over a
# generator expression with `grad` imported under another name, and per-layer gradients appended
# in a loop. Near-twins: the same with create_graph=True, a gradient norm only logged, a constant.
INPUT_GRADIENT = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)


def train_step(model, optimizer, x, y):
    x = x.clone().requires_grad_(True)
    loss = F.cross_entropy(model(x), y)
    gx = torch.autograd.grad(loss, x, retain_graph=True)[0]  # GRAD
    reg = gx.pow(2).sum(dim=1).mean()
    total = loss + 0.5 * reg
    optimizer.zero_grad()
    total.backward()
    optimizer.step()
    return total.detach()


model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
totals = [train_step(model, optimizer, torch.randn(6, 4), torch.randint(0, 3, (6,))) for _ in range(3)]
result = {"totals": torch.stack(totals), "params": [p.detach().clone() for p in model.parameters()]}
"""
INPUT_GRADIENT_ANSWER = INPUT_GRADIENT.replace("retain_graph=True)[0]", "retain_graph=True, create_graph=True)[0]")

NORM_PENALTY = """
import torch
import torch.nn as nn
from torch.autograd import grad as agrad
torch.manual_seed(0)

net = nn.Sequential(nn.Linear(3, 6), nn.Softplus(), nn.Linear(6, 1))
optimizer = torch.optim.Adam(net.parameters(), lr=1e-2)
lam = 0.3
for step in range(3):
    x = torch.randn(10, 3)
    fit = (net(x).squeeze(-1) - x.sum(-1)).pow(2).mean()
    grads = agrad(fit, list(net.parameters()), retain_graph=True)  # GRAD
    penalty = sum(g.norm() ** 2 for g in grads)
    optimizer.zero_grad()
    (fit + lam * penalty).backward()
    optimizer.step()
result = {"params": [p.detach().clone() for p in net.parameters()]}
"""
NORM_PENALTY_ANSWER = NORM_PENALTY.replace("retain_graph=True)  # GRAD", "retain_graph=True, create_graph=True)  # GRAD")
# Near-twins: a gradient norm only logged; a constant term not made from gradients.
NORM_LOGGED = NORM_PENALTY.replace("(fit + lam * penalty).backward()", "fit.backward()\n    logged = penalty.item()")
# Per-layer gradients collected in a list by a loop, then summed: the new route's shape.
LAYER_GRADIENTS = """
import torch
import torch.nn as nn
torch.manual_seed(0)

layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
optimizer = torch.optim.SGD(layers.parameters(), lr=0.05)
for step in range(3):
    h = torch.randn(5, 4)
    for layer in layers:
        h = torch.tanh(layer(h))
    task = h.pow(2).mean()
    per_layer = []
    for layer in layers:
        per_layer.extend(torch.autograd.grad(task, [layer.weight], retain_graph=True))  # GRAD
    smooth = 0
    for g in per_layer:
        smooth = smooth + g.abs().sum()
    optimizer.zero_grad()
    (task + 0.01 * smooth).backward()
    optimizer.step()
result = {"params": [p.detach().clone() for p in layers.parameters()]}
"""
LAYER_GRADIENTS_ANSWER = LAYER_GRADIENTS.replace("retain_graph=True))  # GRAD", "retain_graph=True, create_graph=True))  # GRAD")
# A target computed with autograd.grad (reference forces), used in a term that carries a graph: silent.
FORCE_TARGET = """
import torch
import torch.nn as nn
torch.manual_seed(0)

potential = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
optimizer = torch.optim.Adam(potential.parameters(), lr=1e-2)
for step in range(3):
    positions = torch.randn(5, 3).requires_grad_(True)
    target_forces = -torch.autograd.grad(positions.pow(2).sum(), positions)[0]
    energy = potential(positions).sum()
    forces = -torch.autograd.grad(energy, positions, create_graph=True)[0]
    loss = energy.pow(2) + ((forces - target_forces) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
result = {"params": [p.detach().clone() for p in potential.parameters()]}
"""
CONSTANT_TERM = NORM_PENALTY.replace("penalty = sum(g.norm() ** 2 for g in grads)", "penalty = torch.tensor(2.0)")


def _ad206(outcome):
    return [d for d in outcome.diagnoses if d.code == "AD206"]


def test_gradients_without_a_graph_in_a_penalty_are_named(tmp_path):
    from helpers import run_program

    for source, answer in ((INPUT_GRADIENT, INPUT_GRADIENT_ANSWER), (NORM_PENALTY, NORM_PENALTY_ANSWER),
                           (LAYER_GRADIENTS, LAYER_GRADIENTS_ANSWER)):
        outcome = run_program(tmp_path, source)
        found = _ad206(outcome)
        assert found and found[0].primary.line == outcome.line("GRAD")
        help_ = found[0].help[0]
        assert "create_graph=True" in help_.replacement
        fixed = apply_replacement(outcome.source, help_.location, help_.replacement)
        _same(run_plain(tmp_path, fixed, name="fixed.py")["result"], run_plain(tmp_path, answer, name="answer.py")["result"])


def test_penalties_with_a_graph_logged_norms_and_constants_are_silent(tmp_path):
    from helpers import run_program

    for source in (INPUT_GRADIENT_ANSWER, NORM_PENALTY_ANSWER, LAYER_GRADIENTS_ANSWER, NORM_LOGGED, CONSTANT_TERM,
                   FORCE_TARGET):
        outcome = run_program(tmp_path, source)
        assert outcome.error is None and _ad206(outcome) == []
