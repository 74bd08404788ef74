"""Causes found by held-out variants set 29 (docs/errors.md, "Held-out variants", set 29), each tested on
another program of the same cause (not the variant) and on a correct near-twin; the variants themselves
are run by tests/errors/test_held_out_variants.py.

AD103: an optimizer named by a constant subscript (`self.optimizers[1]`, `optimizers["critic"]`) was not
resolved to the parameters it holds, so the detach of a value computed from the stepped weights alone
(whose gradient from the failing loss is never applied) was not offered, and the step was moved after the
failing backward() instead, training the stepped model on the other loss.

AD120: "return None for <input> (no gradient is needed for it)" was judged on the failing application of
the Function alone; backward's one return line serves every application, and another one in the same graph
may give that input a tensor that requires grad. Every application's needs_input_grad is read now.

AD121: `return x.float()` (or `.to(...)`, `.double()`, ...) after ctx.mark_dirty(x): returning x alone hands
the callers x's own dtype; the conversion belongs at the call, a second place, so the help names both and
changes neither."""

from __future__ import annotations

import torch

from helpers import apply_help, run_as_script, run_plain

# ---- AD103 ---------------------------------------------------------------------------------------

# Co-training of two regressors whose optimizers live in a dict: the second one's consistency term reads
# the first one's prediction without detach(), after the first optimizer stepped.
DICT_OPTIMIZERS_CONSISTENCY = """
    import torch
    from torch import nn

    torch.manual_seed(0)
    nets = {"a": nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 1)),
            "b": nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 1))}
    optimizers = {name: torch.optim.SGD(net.parameters(), lr=0.1) for name, net in nets.items()}
    for _ in range(3):
        x, y = torch.randn(8, 3), torch.randn(8, 1)
        pred_a = nets["a"](x)
        pred_b = nets["b"](x)
        loss_a = (pred_a - y).pow(2).mean() + 0.5 * (pred_a - pred_b.detach()).pow(2).mean()
        optimizers["a"].zero_grad()
        loss_a.backward(retain_graph=True)
        optimizers["a"].step()
        loss_b = (pred_b - y).pow(2).mean() + 0.5 * (pred_b - pred_a).pow(2).mean()  # LOSS
        optimizers["b"].zero_grad()
        loss_b.backward()
        optimizers["b"].step()
"""

DICT_OPTIMIZERS_CORRECT = DICT_OPTIMIZERS_CONSISTENCY.replace("(pred_b - pred_a).pow(2).mean()  # LOSS",
                                                              "(pred_b - pred_a.detach()).pow(2).mean()")

# A GAN whose optimizers are kept in a list: the generator's loss goes through the discriminator on purpose,
# and the value it reads carries the generator's own weights, which its optimizer steps: no detach there.
LISTED_GAN = """
    import torch
    from torch import nn

    torch.manual_seed(0)
    generator = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 3))
    discriminator = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    optimizers = [torch.optim.SGD(discriminator.parameters(), lr=0.1), torch.optim.SGD(generator.parameters(), lr=0.1)]
    for _ in range(2):
        real, noise = torch.randn(6, 3), torch.randn(6, 2)
        fake = generator(noise)
        score_fake = discriminator(fake)
        loss_d = nn.functional.softplus(-discriminator(real)).mean() + nn.functional.softplus(score_fake).mean()
        optimizers[0].zero_grad()
        loss_d.backward(retain_graph=True)
        optimizers[0].step()
        loss_g = nn.functional.softplus(-score_fake).mean()
        optimizers[1].zero_grad()
        loss_g.backward()
        optimizers[1].step()
"""


def test_a_value_of_a_listed_optimizers_weights_alone_is_detached(tmp_path):
    outcome = run_as_script(tmp_path, DICT_OPTIMIZERS_CONSISTENCY)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD103", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("LOSS")
    assert diagnosis.help[0].message.startswith("build loss_b from pred_a.detach()")
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    correct = run_plain(tmp_path, DICT_OPTIMIZERS_CORRECT, "correct.py")
    for name in ("a", "b"):
        for mine, theirs in zip(fixed["nets"][name].parameters(), correct["nets"][name].parameters()):
            assert torch.equal(mine, theirs)


def test_the_detached_consistency_term_stays_silent(tmp_path):
    outcome = run_as_script(tmp_path, DICT_OPTIMIZERS_CORRECT)
    assert outcome.error is None and not outcome.diagnoses


def test_a_listed_gans_generator_loss_is_not_detached(tmp_path):
    outcome = run_as_script(tmp_path, LISTED_GAN)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD103", [d.code for d in outcome.diagnoses]
    assert not any(".detach()" in suggestion.message.split(":")[0] for suggestion in diagnosis.help)


# ---- AD120 ---------------------------------------------------------------------------------------

# A gating Function applied twice: to a fixed mask buffer (no gradient) and, in another block, to a learned
# mask; its backward returns no gradient for the mask. The first application backward meets is the buffer's.
GATE_LEARNED_AND_FIXED = """
    import torch
    from torch import nn

    class Gate(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, mask):
            ctx.save_for_backward(x, mask)
            return x * torch.sigmoid(mask)

        @staticmethod
        def backward(ctx, grad):
            x, mask = ctx.saved_tensors
            return grad * torch.sigmoid(mask),  # RETURN

    class LearnedGate(nn.Module):
        def __init__(self):
            super().__init__()
            self.mask = nn.Parameter(torch.zeros(4))

        def forward(self, x):
            return Gate.apply(x, self.mask)

    class FixedGate(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("mask", torch.tensor([2.0, -2.0, 0.5, 0.0]))

        def forward(self, x):
            return Gate.apply(x, self.mask)

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), LearnedGate(), nn.Linear(4, 4), FixedGate(), nn.Linear(4, 1))
    model(torch.randn(5, 3)).pow(2).mean().backward()
"""

# The same Function where no application gives the mask a gradient: None is right there.
GATE_FIXED_ONLY = GATE_LEARNED_AND_FIXED.replace("nn.Linear(3, 4), LearnedGate(), nn.Linear(4, 4)",
                                                 "nn.Linear(3, 4), FixedGate(), nn.Linear(4, 4)")
GATE_FIXED_ONLY_CORRECT = GATE_FIXED_ONLY.replace("return grad * torch.sigmoid(mask),  # RETURN",
                                                  "return grad * torch.sigmoid(mask), None")
GATE_CORRECT = GATE_LEARNED_AND_FIXED.replace(
    "return grad * torch.sigmoid(mask),  # RETURN",
    "s = torch.sigmoid(mask)\n"
    "            grad_mask = (grad * x * s * (1 - s)).sum(0) if ctx.needs_input_grad[1] else None\n"
    "            return grad * s, grad_mask")


def test_none_is_not_offered_for_an_input_another_application_trains(tmp_path):
    outcome = run_as_script(tmp_path, GATE_LEARNED_AND_FIXED)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD120", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("RETURN")
    assert all(suggestion.replacement is None for suggestion in diagnosis.help)
    assert any("in some applications mask requires grad" in note for note in diagnosis.notes)


def test_none_is_offered_where_no_application_needs_the_gradient(tmp_path):
    outcome = run_as_script(tmp_path, GATE_FIXED_ONLY)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD120", [d.code for d in outcome.diagnoses]
    assert diagnosis.help[0].replacement == "return grad * torch.sigmoid(mask), None"
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    correct = run_plain(tmp_path, GATE_FIXED_ONLY_CORRECT, "correct.py")
    assert all(torch.equal(a.grad, b.grad) for a, b in zip(fixed["model"].parameters(), correct["model"].parameters()))


def test_the_gate_with_its_mask_gradient_stays_silent(tmp_path):
    outcome = run_as_script(tmp_path, GATE_CORRECT)
    assert outcome.error is None and not outcome.diagnoses


# ---- AD121 ---------------------------------------------------------------------------------------

# An in-place scaling Function that returns `x.to(torch.float64)` so that a float64 head can read it.
SCALE_RETURNS_DOUBLE = """
    import torch
    from torch import nn

    class ScaleInPlace(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, factor):
            x.mul_(factor)
            ctx.mark_dirty(x)
            ctx.factor = factor
            return x.to(torch.float64)  # RETURN

        @staticmethod
        def backward(ctx, grad):
            return grad * ctx.factor, None

    torch.manual_seed(0)
    body, head = nn.Linear(3, 4), nn.Linear(4, 1).double()
    hidden = body(torch.randn(5, 3))
    out = head(ScaleInPlace.apply(hidden, 0.5))
    out.sum().backward()
"""

SCALE_CORRECT = SCALE_RETURNS_DOUBLE.replace("return x.to(torch.float64)  # RETURN", "return x").replace(
    "head(ScaleInPlace.apply(hidden, 0.5))", "head(ScaleInPlace.apply(hidden, 0.5).to(torch.float64))")


def test_a_returned_dtype_conversion_gets_both_places_and_no_single_change(tmp_path):
    outcome = run_as_script(tmp_path, SCALE_RETURNS_DOUBLE)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD121", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("RETURN")
    assert all(suggestion.location is None for suggestion in diagnosis.help)
    assert "ScaleInPlace.apply(hidden, 0.5).to(torch.float64)" in diagnosis.help[0].message


def test_the_conversion_at_the_call_stays_silent(tmp_path):
    outcome = run_as_script(tmp_path, SCALE_CORRECT)
    assert outcome.error is None and not outcome.diagnoses


# ---- AD149 ---------------------------------------------------------------------------------------

# A class-based context manager whose __exit__ unscales and clips; the loop steps inside its block.
CLIPPER_CLASS_EXIT = """
    import torch
    from torch import nn

    class ClipOnExit:
        def __init__(self, scaler, optimizer, model, max_norm):
            self.scaler, self.optimizer, self.model, self.max_norm = scaler, optimizer, model, max_norm

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.scaler.unscale_(self.optimizer)
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.max_norm)
            return False

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 5), nn.ReLU(), nn.Linear(5, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu")
    for _ in range(3):
        x, y = torch.randn(6, 3), torch.randn(6, 1)
        optimizer.zero_grad()
        with ClipOnExit(scaler, optimizer, model, 0.3):
            loss = nn.functional.mse_loss(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)  # STEP
        scaler.update()
"""

CLIPPER_CLASS_CORRECT = CLIPPER_CLASS_EXIT.replace("""            scaler.step(optimizer)  # STEP
        scaler.update()""", """        scaler.step(optimizer)
        scaler.update()""")

# The block goes on after the step (it records the loss): moving the step alone is not offered.
CLIPPER_BLOCK_GOES_ON = CLIPPER_CLASS_EXIT.replace("""            scaler.step(optimizer)  # STEP
""", """            scaler.step(optimizer)  # STEP
            last_loss = loss.item()
""")


def test_a_step_inside_a_block_whose_exit_unscales_moves_below_it(tmp_path):
    outcome = run_as_script(tmp_path, CLIPPER_CLASS_EXIT)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD149", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("STEP")
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    correct = run_plain(tmp_path, CLIPPER_CLASS_CORRECT, "correct.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["model"].parameters(), correct["model"].parameters()))


def test_the_step_after_the_block_stays_silent(tmp_path):
    outcome = run_as_script(tmp_path, CLIPPER_CLASS_CORRECT)
    assert outcome.error is None and not outcome.diagnoses


def test_a_block_that_goes_on_after_the_step_gets_no_move(tmp_path):
    outcome = run_as_script(tmp_path, CLIPPER_BLOCK_GOES_ON)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD149", [d.code for d in outcome.diagnoses]
    assert all(suggestion.replacement is None for suggestion in diagnosis.help)
