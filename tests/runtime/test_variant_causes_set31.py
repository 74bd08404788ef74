"""Causes found by held-out variants set 31 (docs/errors.md, "Held-out variants", set 31), each tested on
another program of the same cause (not the variant) and on a correct near-twin; the variants themselves
are run by tests/errors/test_held_out_variants.py.

AD130: a LeakyReLU built with inplace=True whose slope was made negative afterwards (`m.negative_slope = -0.2`
in a function run by model.apply() or a loop over model.modules()) got "inplace=False" at one of the
constructors; the place that made the slope negative is named now, and `inplace = False` is set there too.
Where several in-place uses of one statement are alike (two `LeakyReLU(slope, inplace=True)` on one line),
the help changed the first one only and the program still failed at the other; it changes them all.

AD136: a backward that reads ctx.saved_tensors inside a loop (once per chunk) under checkpoint had no
second read to name (the one read repeats), and the check failed internally: not diagnosed.

AD128: a function of the user's that unwraps a list of one (`ps[0] if len(ps) == 1 else ps`), given to an
optimizer, got the call wrapped in a list: right for one tensor only; the function's return is named now.

AD138: a base written in place inside a function the user's statement calls with it was named at the call,
with advice; the write inside the function is named, and made out of place where the function returns it.

AD150: n critic steps in an inner loop (each a whole step: zero_grad, backward, step) with one update() after
the generator's step got advice; update() goes after each of those steps.

AD235 (set 30's leftover): a strict transform's function whose output is computed from `p.data` or
`p.detach()` of its parameter, in itself or in a helper whose result it returns, got advice at its return."""

from __future__ import annotations

import torch

from helpers import apply_help, run_as_script, run_plain

# ---- AD130 ---------------------------------------------------------------------------------------

# The slope made negative by a loop over the built model's modules, the model written with a positive
# literal slope and inplace=True.
SLOPE_SET_IN_A_MODULES_LOOP = """
    import torch
    from torch import nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = nn.Linear(3, 3)
            self.act = nn.LeakyReLU(0.01, inplace=True)

        def forward(self, x):
            return self.act(self.linear(x))

    torch.manual_seed(0)
    net = nn.Sequential(Block(), Block())
    for m in net.modules():
        if isinstance(m, nn.LeakyReLU):
            m.negative_slope = -0.05  # SLOPE
    x = torch.randn(4, 3)
    net(x).sum().backward()
    grads = [p.grad for p in net.parameters()]
"""

SLOPE_SET_CORRECT = SLOPE_SET_IN_A_MODULES_LOOP.replace(
    "            m.negative_slope = -0.05  # SLOPE",
    "            m.negative_slope = -0.05\n            m.inplace = False")

# The same loop with a positive slope: in place is fine, nothing to say.
POSITIVE_SLOPE_SET = SLOPE_SET_IN_A_MODULES_LOOP.replace("-0.05  # SLOPE", "0.2")

# Two in-place LeakyReLUs with a negative slope from a name, on one line.
TWO_INPLACE_ON_ONE_LINE = """
    import torch
    from torch import nn

    slope = -0.1
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 3), nn.LeakyReLU(slope, inplace=True), nn.Linear(3, 3), nn.LeakyReLU(slope, inplace=True))  # BUILT
    x = torch.randn(4, 3)
    model(x).sum().backward()
    grads = [p.grad for p in model.parameters()]
"""

TWO_ON_ONE_LINE_CORRECT = TWO_INPLACE_ON_ONE_LINE.replace("inplace=True", "inplace=False")


def test_a_slope_made_negative_after_construction_is_named_and_made_out_of_place_there(tmp_path):
    outcome = run_as_script(tmp_path, SLOPE_SET_IN_A_MODULES_LOOP)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD130", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("SLOPE")
    assert diagnosis.help[0].replacement == "m.negative_slope = -0.05\nm.inplace = False"
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    correct = run_plain(tmp_path, SLOPE_SET_CORRECT, "correct.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["grads"], correct["grads"]))


def test_the_out_of_place_module_with_a_negative_slope_stays_silent(tmp_path):
    for program in (SLOPE_SET_CORRECT, POSITIVE_SLOPE_SET):
        outcome = run_as_script(tmp_path, program)
        assert outcome.error is None and not outcome.diagnoses


def test_alike_in_place_uses_of_one_statement_are_all_changed(tmp_path):
    outcome = run_as_script(tmp_path, TWO_INPLACE_ON_ONE_LINE)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD130", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("BUILT")
    assert diagnosis.help[0].replacement.count("inplace=False") == 2
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    correct = run_plain(tmp_path, TWO_ON_ONE_LINE_CORRECT, "correct.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["grads"], correct["grads"]))


def test_the_out_of_place_pair_stays_silent(tmp_path):
    outcome = run_as_script(tmp_path, TWO_ON_ONE_LINE_CORRECT)
    assert outcome.error is None and not outcome.diagnoses


# ---- AD136 ---------------------------------------------------------------------------------------

# A backward that handles the batch in row blocks and unpacks ctx.saved_tensors in the loop's body only:
# the second block unpacks again.
UNPACKED_IN_A_WHILE_LOOP = """
    import torch
    from torch.utils.checkpoint import checkpoint

    class RowScale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, scale):
            ctx.save_for_backward(x, scale)
            return x * scale

        @staticmethod
        def backward(ctx, grad):
            grad_x = torch.empty_like(grad)
            grad_scale = None
            start = 0
            while start < grad.shape[0]:
                x, scale = ctx.saved_tensors  # READ
                rows = slice(start, start + 2)
                grad_x[rows] = grad[rows] * scale
                part = (grad[rows] * x[rows]).sum(0)
                grad_scale = part if grad_scale is None else grad_scale + part
                start += 2
            return grad_x, grad_scale

    torch.manual_seed(0)
    x = torch.randn(5, 3, requires_grad=True)
    scale = torch.randn(3, requires_grad=True)
    checkpoint(lambda a, b: RowScale.apply(a.sin(), b), x, scale, use_reentrant=False).pow(2).sum().backward()
    grads = [x.grad, scale.grad]
"""

UNPACKED_ONCE_BEFORE_THE_LOOP = UNPACKED_IN_A_WHILE_LOOP.replace(
    "                x, scale = ctx.saved_tensors  # READ\n", "").replace(
    "            start = 0\n", "            start = 0\n            x, scale = ctx.saved_tensors\n")

# The same loop whose names are rebound inside it (x is reassigned): no move is offered.
UNPACKED_AND_REBOUND_IN_THE_LOOP = UNPACKED_IN_A_WHILE_LOOP.replace(
    "                part = (grad[rows] * x[rows]).sum(0)",
    "                x = x * 1.0\n                part = (grad[rows] * x[rows]).sum(0)")


def test_an_unpacking_in_a_loop_body_moves_before_the_loop(tmp_path):
    outcome = run_as_script(tmp_path, UNPACKED_IN_A_WHILE_LOOP)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD136", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("READ")
    assert diagnosis.help[0].replacement.startswith("x, scale = ctx.saved_tensors\nwhile start < grad.shape[0]:")
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    correct = run_plain(tmp_path, UNPACKED_ONCE_BEFORE_THE_LOOP, "correct.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["grads"], correct["grads"]))


def test_the_unpacking_before_the_loop_stays_silent(tmp_path):
    outcome = run_as_script(tmp_path, UNPACKED_ONCE_BEFORE_THE_LOOP)
    assert outcome.error is None and not outcome.diagnoses


def test_names_rebound_in_the_loop_keep_the_advice(tmp_path):
    outcome = run_as_script(tmp_path, UNPACKED_AND_REBOUND_IN_THE_LOOP)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD136", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("READ")
    assert all(suggestion.location is None for suggestion in diagnosis.help)


# ---- AD128 ---------------------------------------------------------------------------------------

# LoRA-style fine-tuning: a function of the script collects the adapter's parameters by name and unwraps a
# list of one (written the other way round); the adapter has one parameter here.
ADAPTER_PARAMETERS_UNWRAPPED = """
    import torch
    from torch import nn

    def adapter_parameters(model):
        found = [p for n, p in model.named_parameters() if n.startswith("adapter")]
        return found if len(found) > 1 else found[0]  # RETURNED

    class Adapted(nn.Module):
        def __init__(self):
            super().__init__()
            self.base = nn.Linear(3, 3)
            self.adapter_scale = nn.Parameter(torch.ones(3))

        def forward(self, x):
            return self.base(x) * self.adapter_scale

    torch.manual_seed(0)
    model = Adapted()
    optimizer = torch.optim.SGD(adapter_parameters(model), lr=0.1)
    x = torch.randn(4, 3)
    for _ in range(2):
        optimizer.zero_grad()
        model(x).pow(2).mean().backward()
        optimizer.step()
    scale = model.adapter_scale.detach().clone()
"""

ADAPTER_PARAMETERS_LISTED = ADAPTER_PARAMETERS_UNWRAPPED.replace(
    "        return found if len(found) > 1 else found[0]  # RETURNED", "        return found")

# The same function whose unwrapped value is also used elsewhere as a tensor: changing the return would
# break that use, so the call given to the optimizer is wrapped instead.
ADAPTER_PARAMETERS_ALSO_READ = ADAPTER_PARAMETERS_UNWRAPPED.replace(
    "    scale = model.adapter_scale.detach().clone()",
    "    scale = adapter_parameters(model).detach().clone()")


def test_a_function_unwrapping_a_list_of_one_returns_the_list(tmp_path):
    outcome = run_as_script(tmp_path, ADAPTER_PARAMETERS_UNWRAPPED)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD128", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("RETURNED")
    assert diagnosis.help[0].replacement == "return found"
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    correct = run_plain(tmp_path, ADAPTER_PARAMETERS_LISTED, "correct.py")
    assert torch.equal(fixed["scale"], correct["scale"])


def test_the_function_returning_the_list_stays_silent(tmp_path):
    outcome = run_as_script(tmp_path, ADAPTER_PARAMETERS_LISTED)
    assert outcome.error is None and not outcome.diagnoses


def test_an_unwrapping_function_called_elsewhere_keeps_the_wrapped_call(tmp_path):
    outcome = run_as_script(tmp_path, ADAPTER_PARAMETERS_ALSO_READ)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD128", [d.code for d in outcome.diagnoses]
    assert "torch.optim.SGD([adapter_parameters(model)], lr=0.1)" in diagnosis.help[0].replacement


# ---- AD138 ---------------------------------------------------------------------------------------

# An encoder chunks its projection into mean and log-variance, then a function of the script normalises the
# projection in place through a method and returns it; the caller rebinds the name it passed.
NORMALISED_IN_A_FUNCTION = """
    import torch

    def normalise_rows(t):
        t.div_(t.norm(dim=1, keepdim=True))  # WRITE
        return t

    torch.manual_seed(0)
    w = torch.randn(3, 4, requires_grad=True)
    x = torch.randn(5, 3)
    h = x @ w
    mean, log_var = h.chunk(2, dim=1)
    h = normalise_rows(h)
    loss = (mean ** 2 + log_var.exp()).sum() + h.sum()
    loss.backward()
    grad = w.grad
"""

NORMALISED_OUT_OF_PLACE = NORMALISED_IN_A_FUNCTION.replace(
    "        t.div_(t.norm(dim=1, keepdim=True))  # WRITE", "        t = t.div(t.norm(dim=1, keepdim=True))")

# The function's write is its only effect (nothing returned, the call a statement): named, advice only.
CLAMPED_IN_A_FUNCTION = NORMALISED_IN_A_FUNCTION.replace(
    "        return t\n", "").replace("    h = normalise_rows(h)", "    normalise_rows(h)")


def test_a_write_inside_a_called_function_is_named_and_made_out_of_place_there(tmp_path):
    outcome = run_as_script(tmp_path, NORMALISED_IN_A_FUNCTION)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD138", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("WRITE")
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    correct = run_plain(tmp_path, NORMALISED_OUT_OF_PLACE, "correct.py")
    assert torch.equal(fixed["grad"], correct["grad"])


def test_the_function_written_out_of_place_stays_silent(tmp_path):
    outcome = run_as_script(tmp_path, NORMALISED_OUT_OF_PLACE)
    assert outcome.error is None and not outcome.diagnoses


def test_a_write_that_is_the_function_s_only_effect_gets_advice(tmp_path):
    outcome = run_as_script(tmp_path, CLAMPED_IN_A_FUNCTION)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD138", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("WRITE")
    assert all(suggestion.location is None for suggestion in diagnosis.help)


# ---- AD150 ---------------------------------------------------------------------------------------

# A trainer class steps its discriminator d_steps times in a while loop, through self.scaler, and updates the
# scaler once, after the generator's step.
DISCRIMINATOR_STEPS_BEFORE_ONE_UPDATE = """
    import torch
    from torch import nn

    class GanTrainer:
        def __init__(self):
            torch.manual_seed(0)
            self.g = nn.Linear(2, 3)
            self.d = nn.Linear(3, 1)
            self.g_opt = torch.optim.SGD(self.g.parameters(), lr=0.05)
            self.d_opt = torch.optim.SGD(self.d.parameters(), lr=0.05)
            self.scaler = torch.amp.GradScaler("cpu")
            self.d_steps = 2

        def train_step(self, real):
            done = 0
            while done < self.d_steps:
                self.d_opt.zero_grad()
                fake = self.g(torch.randn(4, 2)).detach()
                d_loss = nn.functional.softplus(self.d(fake)).mean() + nn.functional.softplus(-self.d(real)).mean()
                self.scaler.scale(d_loss).backward()
                self.scaler.step(self.d_opt)  # STEP
                done += 1
            self.g_opt.zero_grad()
            g_loss = nn.functional.softplus(-self.d(self.g(torch.randn(4, 2)))).mean()
            self.scaler.scale(g_loss).backward()
            self.scaler.step(self.g_opt)
            self.scaler.update()

    trainer = GanTrainer()
    real = torch.randn(4, 3)
    for _ in range(2):
        trainer.train_step(real)
    weights = [p.detach().clone() for p in [*trainer.g.parameters(), *trainer.d.parameters()]]
"""

DISCRIMINATOR_STEPS_EACH_UPDATED = DISCRIMINATOR_STEPS_BEFORE_ONE_UPDATE.replace(
    "                self.scaler.step(self.d_opt)  # STEP",
    "                self.scaler.step(self.d_opt)\n                self.scaler.update()")

# Gradients accumulated over micro-batches (no zero_grad in the loop) but stepped in every pass: which of the
# two was meant is not in the program; the advice stays.
MICRO_BATCHES_STEPPED_EACH = DISCRIMINATOR_STEPS_BEFORE_ONE_UPDATE.replace(
    "            while done < self.d_steps:\n                self.d_opt.zero_grad()\n",
    "            self.d_opt.zero_grad()\n            while done < self.d_steps:\n")


def test_an_inner_loop_of_whole_steps_gets_an_update_after_each_step(tmp_path):
    outcome = run_as_script(tmp_path, DISCRIMINATOR_STEPS_BEFORE_ONE_UPDATE)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD150", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("STEP")
    assert diagnosis.help[0].replacement == "self.scaler.step(self.d_opt)\nself.scaler.update()"
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    correct = run_plain(tmp_path, DISCRIMINATOR_STEPS_EACH_UPDATED, "correct.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["weights"], correct["weights"]))


def test_the_updated_discriminator_steps_stay_silent(tmp_path):
    outcome = run_as_script(tmp_path, DISCRIMINATOR_STEPS_EACH_UPDATED)
    assert outcome.error is None and not outcome.diagnoses


def test_micro_batches_stepped_in_every_pass_keep_the_advice(tmp_path):
    outcome = run_as_script(tmp_path, MICRO_BATCHES_STEPPED_EACH)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD150", [d.code for d in outcome.diagnoses]
    assert all(suggestion.location is None for suggestion in diagnosis.help)


# ---- AD235 (set 30's leftover) -------------------------------------------------------------------

# The transformed function itself reads its input through detach(): a policy's action probabilities, their
# Jacobian taken in strict mode.
PROBABILITIES_OF_DETACHED_LOGITS = """
    import torch
    from torch.autograd.functional import jacobian

    weight = torch.tensor([[0.5, -1.0], [2.0, 0.3], [-0.7, 1.1]])

    def action_probabilities(observation):
        return torch.softmax(weight @ observation.detach(), dim=0)  # CUT

    jac = jacobian(action_probabilities, torch.tensor([0.2, -0.4]), strict=True)
"""

PROBABILITIES_WITH_GRAPH = PROBABILITIES_OF_DETACHED_LOGITS.replace("observation.detach()", "observation")

# A helper that reads .data, called from two places: one of them may rely on the cut, so the advice stays.
HELPER_READING_DATA_CALLED_TWICE = """
    import torch
    from torch.autograd.functional import jacobian

    def unit(v):
        return v.data / v.data.norm()

    def direction(x):
        return unit(torch.stack([x[0] * x[1], x[1] + 1.0]))  # RETURNED

    target = unit(torch.tensor([3.0, 4.0]))
    jac = jacobian(direction, torch.tensor([0.5, 2.0]), strict=True)
"""


def test_a_parameter_read_through_detach_is_read_itself(tmp_path):
    outcome = run_as_script(tmp_path, PROBABILITIES_OF_DETACHED_LOGITS)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD235", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("CUT")
    assert diagnosis.help[0].replacement == "return torch.softmax(weight @ observation, dim=0)"
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    correct = run_plain(tmp_path, PROBABILITIES_WITH_GRAPH, "correct.py")
    assert torch.equal(fixed["jac"], correct["jac"])


def test_the_function_reading_its_input_stays_silent(tmp_path):
    outcome = run_as_script(tmp_path, PROBABILITIES_WITH_GRAPH)
    assert outcome.error is None and not outcome.diagnoses


def test_a_helper_reading_data_called_twice_keeps_the_advice(tmp_path):
    outcome = run_as_script(tmp_path, HELPER_READING_DATA_CALLED_TWICE)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD235", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("RETURNED")
    assert all(suggestion.location is None for suggestion in diagnosis.help)
