"""Causes that set 25 left (docs/bug-reports.md, "Set 25's misses, worked on"), each on programs of
its own, in other shapes than the set's cases: the diagnosis names the line to change, its help
applied makes the program compute what a hand-written version computes, and a correct near-twin
runs silent.

- AD301, a grad-off context object stored on the instance (`self.ctx = torch.no_grad()`, made in
  `__init__`) and entered many calls later (`with self.ctx:`): the construction is named; an
  `if FLAG:`/`else:` whose flag asks for gradients and whose true branch turns them off is offered
  swapped (unverified); a `.detach()` whose inputs could not be judged, on another statement of the
  loss, is no longer blamed.
"""

from __future__ import annotations

import os
import sys
import textwrap
import warnings

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "errors"))

from catalogue import apply_suggestion, marked_line, run_plain, run_watched, write  # noqa: E402

import autograd_doctor  # noqa: E402


def diagnose(tmp_path, source, name="program"):
    source = textwrap.dedent(source)
    error = run_watched(write(tmp_path, source, name))
    assert error is not None
    return source, autograd_doctor.diagnoses_of(error)


def silent(tmp_path, source, name="twin"):
    assert run_watched(write(tmp_path, textwrap.dedent(source), name)) is None


def only(diagnoses, code):
    (found,) = [d for d in diagnoses if d.code == code]
    return found


def reference(tmp_path, source):
    error, namespace = run_plain(write(tmp_path, textwrap.dedent(source), "reference"))
    assert error is None, error
    return namespace


def same(a, b):
    return len(a) == len(b) and all(torch.allclose(x, y, atol=1e-6) for x, y in zip(a, b))


# ---- AD301: a stored grad-off context chosen by a swapped if --------------------------------------

SWAPPED = """
    from contextlib import nullcontext

    import torch
    from torch import nn

    torch.manual_seed(0)


    class Stepper:
        def __init__(self, net, track_grad=False):
            self.net = net
            self.cache = {{}}
            if track_grad:
                {first}
            else:
                {second}

        def advance(self, state):
            with self._ctx:
                self.cache["next"] = state + 0.1 * torch.tanh(self.net(state))
            return self.cache["next"]


    def rollout(stepper, state, steps):
        for _ in range(steps):
            state = stepper.advance(state)
        return state


    start = torch.randn(3, 2)
    target = rollout(Stepper(nn.Linear(2, 2)), start, 4).detach()
    net = nn.Linear(2, 2)
    stepper = Stepper(net, track_grad=True)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    for _ in range(2):
        end = rollout(stepper, start, 4)
        loss = ((end - target) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    result = [loss.detach(), net.weight.detach().clone(), net.bias.detach().clone()]
"""
OFF, ON = "self._ctx = torch.no_grad()  # made", "self._ctx = nullcontext()"


def test_stored_context_chosen_by_swapped_if_names_the_construction_and_swaps(tmp_path):
    source, diagnoses = diagnose(tmp_path, SWAPPED.format(first=OFF, second=ON))
    found = only(diagnoses, "AD301")
    # The if/else that the help exchanges is named; it holds the construction.
    assert found.primary.line < marked_line(source, "made") <= found.primary.end_line
    assert found.primary.source == "if track_grad:"
    assert "with self._ctx:" in str(found)
    assert "target" not in found.primary.source  # the reference's detach is not blamed
    first = found.help[0]
    assert "swapped" in first.message and "unverified" in first.message
    fixed = tmp_path / "program.py"
    fixed.write_text(apply_suggestion(fixed.read_text(), first))
    error, namespace = run_plain(str(fixed))
    assert error is None, error
    expected = reference(tmp_path, SWAPPED.format(first=ON, second=OFF.split("  #")[0]))
    assert same(namespace["result"], expected["result"])


def test_stored_context_right_way_round_is_silent(tmp_path):
    silent(tmp_path, SWAPPED.format(first=ON, second=OFF))


# ---- AD301: a stored grad-off context made once, no flag ------------------------------------------

UNCONDITIONAL = """
    import contextlib

    import torch
    from torch import nn

    torch.manual_seed(1)


    class FeatureBank:
        def __init__(self, encoder):
            self.encoder = encoder
            self.guard = {made}
            self.rows = []

        def push(self, batch):
            with self.guard:
                self.rows.append(self.encoder(batch).relu())

        def embed_all(self, batches):
            for batch in batches:
                self.push(batch)
            return torch.cat(self.rows)


    encoder = nn.Linear(4, 3)
    bank = FeatureBank(encoder)
    weights = torch.ones(3)
    loss = (bank.embed_all(torch.randn(3, 2, 4)) * weights).sum()
    loss.backward()
    result = [loss.detach(), encoder.weight.grad.clone()]
"""


def test_stored_context_made_once_is_named_with_advice(tmp_path):
    source, diagnoses = diagnose(tmp_path, UNCONDITIONAL.format(made="torch.no_grad()  # made"))
    found = only(diagnoses, "AD301")
    assert found.primary.line == marked_line(source, "made")
    assert all(suggestion.replacement is None for suggestion in found.help)  # no flag: advice only
    assert "nullcontext" in found.help[0].message and "unverified" in found.help[0].message
    # The advice, applied as it says, gives the hand-written version's values.
    fixed = tmp_path / "program.py"
    fixed.write_text(fixed.read_text().replace("torch.no_grad()  # made", "contextlib.nullcontext()"))
    error, namespace = run_plain(str(fixed))
    assert error is None, error
    expected = reference(tmp_path, UNCONDITIONAL.format(made="contextlib.nullcontext()"))
    assert same(namespace["result"], expected["result"])


def test_stored_context_made_once_correct_twin_is_silent(tmp_path):
    silent(tmp_path, UNCONDITIONAL.format(made="contextlib.nullcontext()"))


# ---- a detach on the loss's own path is still the cut -----------------------------------------------

DETACH_ON_PATH = """
    import torch
    from torch import nn

    torch.manual_seed(2)
    net = nn.Linear(3, 1)


    class Evaluator:
        def __init__(self):
            self.ctx = torch.no_grad()
            self.last = None

        def score(self, x):
            with self.ctx:
                self.last = net(x).sum()


    def features(x):
        return net(x)


    x = torch.randn(4, 3)
    Evaluator().score(x)
    out = features(x).detach()  # cut
    loss = (out ** 2).mean()
    loss.backward()
"""


def test_detach_on_the_loss_path_is_still_blamed_beside_an_evaluation_context(tmp_path):
    source, diagnoses = diagnose(tmp_path, DETACH_ON_PATH)
    found = only(diagnoses, "AD301")
    assert found.primary.line == marked_line(source, "cut")


# ---- AD306: parameters made with requires_grad=False are the origin ---------------------------------

FROZEN_AT_BIRTH = """
    import torch
    from torch import nn

    torch.manual_seed(3)


    class Scorer(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(4, 2)
            {made}

        def forward(self, x):
            return self.proj(x) / self.temperature


    scorer = Scorer()
    x = torch.randn(6, 4)
    for _ in range(2):
        loss = scorer(x).logsumexp(-1).mean()
        params = list(scorer.parameters())
        grads = torch.autograd.grad(loss, params)
        with torch.no_grad():
            for p, g in zip(params, grads):
                p -= 0.1 * g
    result = [scorer.proj.weight.detach().clone(), scorer.proj.bias.detach().clone()]
"""
AS_PARAMETER = "self.temperature = nn.Parameter(torch.tensor(2.0), requires_grad=False)  # made"
AS_BUFFER = "self.register_buffer('temperature', torch.tensor(2.0))"


def test_parameter_made_frozen_names_its_construction(tmp_path):
    source, diagnoses = diagnose(tmp_path, FROZEN_AT_BIRTH.format(made=AS_PARAMETER))
    found = only(diagnoses, "AD306")
    assert found.primary.line == marked_line(source, "made")
    assert "register_buffer('temperature', torch.tensor(2.0))" in found.help[1].message
    fixed = tmp_path / "program.py"
    fixed.write_text(apply_suggestion(fixed.read_text(), found.help[0]))
    error, namespace = run_plain(str(fixed))
    assert error is None, error
    expected = reference(tmp_path, FROZEN_AT_BIRTH.format(made=AS_BUFFER))
    assert same(namespace["result"], expected["result"])


def test_buffer_twin_is_silent(tmp_path):
    silent(tmp_path, FROZEN_AT_BIRTH.format(made=AS_BUFFER))


def test_parameter_frozen_later_keeps_the_call_as_the_line(tmp_path):
    # Frozen by an assignment after construction (fine-tuning): not a buffer by construction.
    later = FROZEN_AT_BIRTH.format(made="self.temperature = nn.Parameter(torch.tensor(2.0))").replace(
        "    scorer = Scorer()\n", "    scorer = Scorer()\n    scorer.temperature.requires_grad = False\n")
    source, diagnoses = diagnose(tmp_path, later)
    found = only(diagnoses, "AD306")
    assert "nn.Parameter" not in found.primary.source
    assert not any("register_buffer" in h.message for h in found.help)


# ---- AD313: a custom Function applied under autocast without custom_fwd ------------------------------

AUTOCAST_FUNCTION = """
    import torch
    from torch import nn

    torch.manual_seed(4)


    class ScaledProjection(torch.autograd.Function):
        @staticmethod{forward_decorator}
        def forward(ctx, x, w):
            ctx.save_for_backward(x, w)
            return torch.einsum("bi,oi->bo", x, w) * 0.5

        @staticmethod{backward_decorator}
        def backward(ctx, grad):
            x, w = ctx.saved_tensors
            return torch.einsum("bo,oi->bi", grad, w) * 0.5, torch.einsum("bo,bi->oi", grad, x) * 0.5


    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.inp = nn.Linear(6, 6)
            self.w = nn.Parameter(torch.randn(3, 6))

        def forward(self, x):
            return ScaledProjection.apply(torch.relu(self.inp(x)), self.w)


    block = Block()
    optimizer = torch.optim.SGD(block.parameters(), lr=0.05)
    losses = []
    for x in torch.randn(2, 5, 6):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = block(x).square().mean()
        optimizer.zero_grad()
        loss.float().backward()
        optimizer.step()
        losses.append(loss.detach().float())
    result = losses + [p.detach().clone() for p in block.parameters()]
"""
FORWARD_DECORATOR = "\n        @torch.amp.custom_fwd(device_type='cpu', cast_inputs=torch.float32)"
BACKWARD_DECORATOR = "\n        @torch.amp.custom_bwd(device_type='cpu')"


def test_function_under_autocast_without_custom_fwd(tmp_path):
    source, diagnoses = diagnose(tmp_path, AUTOCAST_FUNCTION.format(forward_decorator="  # forward",
                                                                    backward_decorator=""))
    found = only(diagnoses, "AD313")
    assert found.primary.line == marked_line(source, "forward")
    assert "custom_fwd(device_type='cpu', cast_inputs=torch.float32)" in found.help[0].replacement
    fixed = tmp_path / "program.py"
    fixed.write_text(apply_suggestion(fixed.read_text(), found.help[0]))
    error, namespace = run_plain(str(fixed))
    assert error is None, error
    expected = reference(tmp_path, AUTOCAST_FUNCTION.format(forward_decorator=FORWARD_DECORATOR,
                                                            backward_decorator=BACKWARD_DECORATOR))
    assert same(namespace["result"], expected["result"])


def test_function_with_custom_fwd_is_silent(tmp_path):
    silent(tmp_path, AUTOCAST_FUNCTION.format(forward_decorator=FORWARD_DECORATOR,
                                              backward_decorator=BACKWARD_DECORATOR))


def test_mixed_dtypes_without_autocast_are_not_ad313(tmp_path):
    # float64 activations and a float32 weight, no autocast anywhere: the user's own dtypes.
    program = AUTOCAST_FUNCTION.format(forward_decorator="", backward_decorator="").replace(
        'with torch.autocast("cpu", dtype=torch.bfloat16):', "if True:").replace(
        'return torch.einsum("bi,oi->bo", x, w) * 0.5', 'return torch.einsum("bi,oi->bo", x, w.double()) * 0.5'
    ).replace("torch.relu(self.inp(x))", "torch.relu(self.inp(x)).double()")
    error = run_watched(write(tmp_path, textwrap.dedent(program), "program"))
    assert error is not None  # the backward mixes float64 and float32
    assert "AD313" not in [d.code for d in autograd_doctor.diagnoses_of(error)]


# ---- AD213: a wrapper kept on the trainer whose loss module is in no optimizer -------------------------

OWN_WRAPPER = """
    import warnings

    import torch
    from torch import nn

    torch.manual_seed(5)


    class WeightedLosses(nn.Module):
        def __init__(self):
            super().__init__()
            self.log_vars = nn.Parameter(torch.zeros(2))

        def forward(self, pred, y):
            terms = torch.stack([(pred - y).pow(2).mean(), (pred - y).abs().mean()])
            return (torch.exp(-self.log_vars) * terms + self.log_vars).sum()


    class Joint(nn.Module):
        def __init__(self, net, criterion):
            super().__init__()
            self.net = net
            self.criterion = criterion

        def forward(self, x, y):
            return self.criterion(self.net(x), y)


    class Trainer:
        def __init__(self, net):
            self.opt = torch.optim.SGD(net.parameters(), lr=0.05)
            self.criterion = WeightedLosses()
            self.joint = Joint(net, self.criterion){added}

        def fit(self, batches):
            for x, y in batches:
                loss = self.joint(x, y)
                self.opt.zero_grad()
                loss.backward()
                self.opt.step()


    net = nn.Linear(3, 1)
    trainer = Trainer(net)
    trainer.fit([(torch.randn(8, 3), torch.randn(8, 1)) for _ in range(3)])
    result = [net.weight.detach().clone(), trainer.criterion.log_vars.detach().clone()]
"""
ADDED = '\n            self.opt.add_param_group({"params": self.criterion.parameters()})'


def diagnose_warning(tmp_path, source, code):
    import runpy

    path = write(tmp_path, textwrap.dedent(source), "program")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with autograd_doctor.watch() as doctor:
            runpy.run_path(path, run_name="__main__")
    return [d for d in doctor.diagnoses if d.code == code]


def test_wrapper_on_the_trainer_names_where_it_is_made(tmp_path):
    (found,) = diagnose_warning(tmp_path, OWN_WRAPPER.format(added=""), "AD213")
    assert found.primary.source == "self.joint = Joint(net, self.criterion)"
    first = found.help[0]
    assert "self.opt.add_param_group" in first.replacement
    fixed = tmp_path / "program.py"
    fixed.write_text(apply_suggestion(fixed.read_text(), first))
    error, namespace = run_plain(str(fixed))
    assert error is None, error
    expected = reference(tmp_path, OWN_WRAPPER.format(added=ADDED))
    assert same(namespace["result"], expected["result"])


def test_wrapper_on_the_trainer_with_the_group_added_is_silent(tmp_path):
    assert diagnose_warning(tmp_path, OWN_WRAPPER.format(added=ADDED), "AD213") == []


def test_wrapper_whose_loss_weights_are_fixed_is_silent(tmp_path):
    fixed_weights = OWN_WRAPPER.format(added="").replace("nn.Parameter(torch.zeros(2))",
                                                         "nn.Parameter(torch.zeros(2), requires_grad=False)")
    assert diagnose_warning(tmp_path, fixed_weights, "AD213") == []
