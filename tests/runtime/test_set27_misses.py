"""Causes that set 27 left (docs/bug-reports.md, "Set 27: misses worked on"), each on programs of
their own, in other shapes than the set's cases: the diagnosis names the line to change, its help
applied makes the program compute what a hand-written version computes, and correct near-twins run
silent.

- AD316, a module's result cut by the user's `detach_()`, so that an optimizer steps parameters that
  never get a gradient while its others train (set 27's DenseTNT goal MLP,
  Tsinghua-MARS-Lab/DenseTNT#11).
"""

from __future__ import annotations

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


def codes_of(diagnoses):
    return sorted(d.code for d in diagnoses)


def result_of(tmp_path, source, name):
    error, namespace = run_plain(write(tmp_path, textwrap.dedent(source), name))
    assert error is None, error
    return namespace["result"]


def same(a, b):
    return len(a) == len(b) and all(torch.equal(x, y) for x, y in zip(a, b))


# ---- AD316: a module's result cut in place --------------------------------------------------------

# A conditional decoder whose label embedding is cut inside the model's own forward.
CONDITIONAL = """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    torch.manual_seed(0)


    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(5, 6)
            self.body = nn.Sequential(nn.Linear(10, 16), nn.Tanh(), nn.Linear(16, 8))

        def forward(self, z, labels):
            condition = self.embed(labels)
            {cut}
            return self.body(torch.cat([z, condition], dim=-1))


    decoder = Decoder()
    optimizer = torch.optim.Adam(decoder.parameters(), lr=1e-2)
    for step in range(5):
        z, labels, target = torch.randn(7, 4), torch.randint(0, 5, (7,)), torch.randn(7, 8)
        optimizer.zero_grad()
        F.mse_loss(decoder(z, labels), target).backward()
        optimizer.step()
    result = [p.detach().clone() for p in decoder.parameters()]
"""

# No class of the user's: a projection cut in a plain training function, SGD with momentum.
PROJECTION = """
    import torch
    import torch.nn as nn

    torch.manual_seed(1)
    projection = nn.Sequential(nn.Linear(3, 5), nn.ReLU(), nn.Linear(5, 5))
    head = nn.Linear(5, 1)
    optimizer = torch.optim.SGD(list(projection.parameters()) + list(head.parameters()), lr=0.05, momentum=0.9)


    def train_step(x, y):
        optimizer.zero_grad()
        z = projection(x)
        {cut}
        loss = ((head(z) - y) ** 2).mean()
        loss.backward()
        optimizer.step()
        return loss.detach()


    losses = [train_step(torch.randn(6, 3), torch.randn(6, 1)) for _ in range(4)]
    result = losses + [p.detach().clone() for p in [*projection.parameters(), *head.parameters()]]
"""


def test_cut_inside_a_module_forward_names_the_detach(tmp_path):
    (found,) = [d for d in warned(tmp_path, CONDITIONAL.format(cut="condition.detach_()")) if d.code == "AD316"]
    assert found.primary.line == 17 and found.primary.source == "condition.detach_()"
    assert "1 parameter of the 5" in found.notes[0]
    fixed = tmp_path / "fixed.py"
    fixed.write_text(apply_suggestion(textwrap.dedent(CONDITIONAL.format(cut="condition.detach_()")), found.help[0]))
    error, namespace = run_plain(str(fixed))
    assert error is None, error
    assert same(namespace["result"], result_of(tmp_path, CONDITIONAL.format(cut="pass"), "by_hand"))


def test_cut_in_a_training_function_names_the_detach(tmp_path):
    (found,) = [d for d in warned(tmp_path, PROJECTION.format(cut="z.detach_()")) if d.code == "AD316"]
    assert found.primary.line == 14 and "4 parameters of the 6" in found.notes[0]
    fixed = tmp_path / "fixed.py"
    fixed.write_text(apply_suggestion(textwrap.dedent(PROJECTION.format(cut="z.detach_()")), found.help[0]))
    error, namespace = run_plain(str(fixed))
    assert error is None, error
    assert same(namespace["result"], result_of(tmp_path, PROJECTION.format(cut="pass"), "by_hand"))


def test_correct_versions_are_silent(tmp_path):
    assert "AD316" not in codes_of(warned(tmp_path, CONDITIONAL.format(cut="pass"), "a"))
    assert "AD316" not in codes_of(warned(tmp_path, PROJECTION.format(cut="pass"), "b"))


# A frozen extractor cut on purpose: its parameters are in no optimizer.
FROZEN_EXTRACTOR = """
    import torch
    import torch.nn as nn

    torch.manual_seed(2)
    backbone, head = nn.Linear(4, 6), nn.Linear(6, 2)
    optimizer = torch.optim.Adam(head.parameters(), lr=1e-2)
    for _ in range(4):
        features = backbone(torch.randn(5, 4))
        features.detach_()
        loss = head(features).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""

# The same module detached for a logged value and trained through another call.
TRAINED_ELSEWHERE = """
    import torch
    import torch.nn as nn

    torch.manual_seed(3)
    encoder, head = nn.Linear(4, 6), nn.Linear(6, 1)
    optimizer = torch.optim.SGD([*encoder.parameters(), *head.parameters()], lr=0.1)
    for _ in range(4):
        x = torch.randn(5, 4)
        anchor = encoder(x.flip(0))
        anchor.detach_()
        loss = (head(encoder(x)) - head(anchor)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""

# A target network cut in place, updated by copy and in no optimizer (DQN).
TARGET_NETWORK = """
    import torch
    import torch.nn as nn

    torch.manual_seed(4)
    online, target = nn.Linear(3, 2), nn.Linear(3, 2)
    target.load_state_dict(online.state_dict())
    optimizer = torch.optim.Adam(online.parameters(), lr=1e-2)
    for step in range(6):
        s, s2, r = torch.randn(8, 3), torch.randn(8, 3), torch.randn(8)
        bootstrap = target(s2).max(1).values
        bootstrap.detach_()
        loss = (online(s).max(1).values - (r + 0.9 * bootstrap)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 2 == 1:
            target.load_state_dict(online.state_dict())
"""


def test_purposeful_cuts_are_silent(tmp_path):
    for name, source in [("frozen", FROZEN_EXTRACTOR), ("elsewhere", TRAINED_ELSEWHERE), ("target", TARGET_NETWORK)]:
        assert "AD316" not in codes_of(warned(tmp_path, source, name)), name


# ---- AD317: an optimizer that never steps and never clears ------------------------------------------

# A scheduler-like wrapper whose guard is never true with the default period of 1.
EVERY_N = """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    torch.manual_seed(5)


    class Periodic:
        def __init__(self, optimizer, period=1):
            self.inner = optimizer
            self.period = period
            self.calls = 0

        def step(self):
            self.calls += 1
            if {guard}:
                self.inner.step()
                self.inner.zero_grad()


    model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
    wrapped = Periodic(torch.optim.SGD(model.parameters(), lr=0.05))
    losses = []
    for _ in range(5):
        x, y = torch.randn(6, 3), torch.randn(6, 1)
        loss = F.mse_loss(model(x), y)
        loss.backward()
        wrapped.step()
        losses.append(loss.detach())
    result = losses + [p.detach().clone() for p in model.parameters()]
"""
BROKEN_GUARD = "self.period > 1 and self.calls % self.period == 0"
RIGHT_GUARD = "self.period <= 1 or self.calls % self.period == 0"

# No wrapper: a second optimizer for the head, never stepped nor cleared (the body's is).
TWO_OPTIMIZERS = """
    import torch
    import torch.nn as nn

    torch.manual_seed(6)
    body, head = nn.Linear(4, 6), nn.Linear(6, 2)
    body_optimizer = torch.optim.Adam(body.parameters(), lr=1e-2)
    head_optimizer = torch.optim.Adam(head.parameters(), lr=1e-2)
    for _ in range(4):
        body_optimizer.zero_grad()
        {clear}
        loss = head(torch.relu(body(torch.randn(5, 4)))).pow(2).mean()
        loss.backward()
        body_optimizer.step()
        {step}
"""


def test_wrapper_whose_guard_never_holds_names_the_guarded_step(tmp_path):
    (found,) = [d for d in warned(tmp_path, EVERY_N.format(guard=BROKEN_GUARD)) if d.code == "AD317"]
    assert found.primary.line == 17 and found.primary.source.startswith("if self.period > 1")
    assert [r.line for r in found.related] == [18, 23] and found.related[0].source == "self.inner.step()"
    assert "5 backward() calls" in found.notes[0] and found.help[0].replacement is None


def test_second_optimizer_never_stepped_names_its_construction(tmp_path):
    (found,) = [d for d in warned(tmp_path, TWO_OPTIMIZERS.format(clear="pass", step="pass")) if d.code == "AD317"]
    assert found.primary.line == 8
    assert "Adam(head.parameters()" in found.primary.source


def test_optimizers_that_step_or_clear_are_silent(tmp_path):
    assert "AD317" not in codes_of(warned(tmp_path, EVERY_N.format(guard=RIGHT_GUARD), "a"))
    assert "AD317" not in codes_of(warned(tmp_path, EVERY_N.format(guard="self.calls % 2 == 0"), "b"))
    assert "AD317" not in codes_of(warned(tmp_path, TWO_OPTIMIZERS.format(
        clear="head_optimizer.zero_grad()", step="head_optimizer.step()"), "c"))


# A hand-written update with an optimizer built for its learning rate only; a phase-2 optimizer over
# parameters another optimizer steps; an optimizer given to one backward() only.
HAND_UPDATE = """
    import torch

    torch.manual_seed(7)
    w = torch.randn(3, requires_grad=True)
    optimizer = torch.optim.SGD([w], lr=0.1)
    for _ in range(4):
        ((w * torch.randn(3)).sum() ** 2).backward()
        with torch.no_grad():
            w -= optimizer.param_groups[0]["lr"] * w.grad
        w.grad.zero_()
"""
TWO_PHASES = """
    import torch
    import torch.nn as nn

    torch.manual_seed(8)
    model = nn.Linear(3, 1)
    warmup = torch.optim.SGD(model.parameters(), lr=0.01)
    main = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(4):
        warmup.zero_grad()
        model(torch.randn(4, 3)).pow(2).mean().backward()
        warmup.step()
"""
ONE_BACKWARD = """
    import torch
    import torch.nn as nn

    torch.manual_seed(9)
    model = nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    model(torch.randn(4, 3)).pow(2).mean().backward()
    norms = [p.grad.norm() for p in model.parameters()]
"""


def test_hand_updates_phases_and_single_backward_are_silent(tmp_path):
    for name, source in [("hand", HAND_UPDATE), ("phases", TWO_PHASES), ("once", ONE_BACKWARD)]:
        assert "AD317" not in codes_of(warned(tmp_path, source, name)), name


def test_a_run_cut_short_by_an_exception_is_not_judged(tmp_path):
    """The program fails before the step that accumulation would have reached: the run did not show
    that the optimizer never steps (AD317), nor that the parameters never get a gradient (AD316)."""
    source = TWO_OPTIMIZERS.format(clear="pass", step="pass") + "    raise ValueError('the data ran out')\n"
    path = write(tmp_path, textwrap.dedent(source), "failing")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with autograd_doctor.watch() as doctor:
                runpy.run_path(path, run_name="__main__")
        except ValueError:
            pass
    assert "AD317" not in codes_of(doctor.diagnoses)
