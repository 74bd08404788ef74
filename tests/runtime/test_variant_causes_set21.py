"""Causes found by held-out variants set 21 (docs/errors.md, "Held-out variants", set 21), each tested on
another program of the same cause (not the variant) and on a correct near-twin.

AD115: `conv.weight.requires_grad_(False)` on a layer under the legacy torch.nn.utils.weight_norm (or
spectral_norm) got the help to detach the computed weight: the legacy helpers recompute the weight from
`weight_g`/`weight_v` (`weight_orig`) in a forward pre-hook before every forward, so the detached weight
is replaced at the next forward and the layer went on training (a wrong help). (The legacy
spectral_norm's weight is a plain tensor until the first forward: freezing it then raises nothing.) The hook registered on
the module object for that attribute is found, and the flag is set on the parameters it computes from."""

from __future__ import annotations

import torch

from helpers import apply_help, run_as_script, run_plain, run_program

LEGACY_WEIGHT_NORM_CRITIC = """
    import torch
    from torch import nn
    from torch.nn.utils import weight_norm

    class Critic(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([weight_norm(nn.Linear(3, 4), name="weight", dim=0), nn.Linear(4, 1)])
            self.layers[0].weight.requires_grad = False  # FREEZE

        def forward(self, x):
            return self.layers[1](torch.tanh(self.layers[0](x)))

    torch.manual_seed(0)
    critic = Critic()
    loss = critic(torch.randn(5, 3)).mean()
    loss.backward()
    result = critic
"""


def test_a_legacy_weight_norm_weight_in_init_gets_its_g_and_v(tmp_path):
    outcome = run_as_script(tmp_path, LEGACY_WEIGHT_NORM_CRITIC)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD115", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("FREEZE")
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")["result"]
    layer = fixed.layers[0]
    assert layer.weight_g.grad is None and layer.weight_v.grad is None
    assert layer.bias.grad is not None and fixed.layers[1].weight.grad is not None


LEGACY_SPECTRAL_NORM_CRITIC = """
    import torch
    from torch import nn
    from torch.nn.utils import spectral_norm

    class Critic(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(spectral_norm(nn.Linear(3, 4)), nn.LeakyReLU(0.2),
                                      spectral_norm(nn.Linear(4, 1)))

        def freeze_first(self):
            self.body[0].weight.requires_grad = False  # FREEZE

    torch.manual_seed(0)
    critic = Critic()
    x = torch.randn(5, 3)
    warm_up = critic.body(x).mean().item()
    critic.freeze_first()
    loss = critic.body(x).mean()
    loss.backward()
    result = critic
"""


def test_a_legacy_spectral_norm_weight_gets_the_parameter_it_is_recomputed_from(tmp_path):
    outcome = run_as_script(tmp_path, LEGACY_SPECTRAL_NORM_CRITIC)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD115", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("FREEZE")
    assert diagnosis.help[0].replacement == "self.body[0].weight_orig.requires_grad_(False)"
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")["result"]
    assert fixed.body[0].weight_orig.grad is None
    assert fixed.body[0].bias.grad is not None and fixed.body[2].weight_orig.grad is not None


def test_the_legacy_weight_norm_frozen_on_its_parameters_stays_silent(tmp_path):
    source = """
        import torch
        from torch import nn
        from torch.nn.utils import weight_norm

        torch.manual_seed(0)
        conv = weight_norm(nn.Conv1d(2, 3, 3, padding=1))
        conv.weight_g.requires_grad_(False)
        conv.weight_v.requires_grad_(False)
        loss = conv(torch.randn(2, 2, 6)).pow(2).mean()
        loss.backward()
        frozen = conv.weight_g.grad is None and conv.weight_v.grad is None
    """
    outcome = run_program(tmp_path, source)
    assert outcome.error is None and not outcome.diagnoses


def test_a_computed_weight_without_the_legacy_hook_keeps_the_detach_help(tmp_path):
    source = """
        import torch

        torch.manual_seed(0)
        base = torch.randn(3, 3, requires_grad=True)
        weight = base * 2.0
        weight.requires_grad_(False)  # FREEZE
    """
    outcome = run_as_script(tmp_path, source)
    assert outcome.diagnosis.code == "AD115"
    assert outcome.diagnosis.primary.line == outcome.line("FREEZE")
    assert "weight_g" not in (outcome.diagnosis.help[0].replacement or "")
    assert "_orig" not in (outcome.diagnosis.help[0].replacement or "")



# AD301: `with torch.set_grad_enabled(phase == "training"):` (an expression, not a constant) that ran
# with gradients off was not seen as the cut ("check the function called here", advice at the loss
# line): the run's record of the user's set_grad_enabled calls now tells which header turned them off.
# When the function calls backward() only under `if phase == "train":`, the header compares the same
# name with another string: the help compares it with the backward's spelling.

TRAINER_MODE_SPELLED_APART = """
    import torch
    from torch import nn

    class Trainer:
        def __init__(self, model):
            self.model = model
            self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            self.mode = "fit"

        def step(self, x, y):
            with torch.set_grad_enabled(self.mode == "train"):  # HEADER
                out = self.model(x)
                loss = (out - y).abs().mean()
            if self.mode == "fit":
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            return loss.item()

    torch.manual_seed(0)
    trainer = Trainer(nn.Linear(3, 2))
    history = [trainer.step(torch.randn(4, 3), torch.randn(4, 2)) for _ in range(2)]
    result = trainer.model
"""


def test_a_grad_switch_comparing_another_spelling_gets_the_backward_s_spelling(tmp_path):
    outcome = run_as_script(tmp_path, TRAINER_MODE_SPELLED_APART)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD301", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("HEADER")
    assert diagnosis.help[0].replacement == 'with torch.set_grad_enabled(self.mode == "fit"):'
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    twin = run_plain(tmp_path, TRAINER_MODE_SPELLED_APART.replace('self.mode == "train"', "True"), "twin.py")
    assert fixed["history"] == twin["history"]
    for mine, theirs in zip(fixed["result"].parameters(), twin["result"].parameters()):
        assert torch.equal(mine, theirs) and torch.equal(mine.grad, theirs.grad)


def test_the_same_spelling_in_both_places_stays_silent(tmp_path):
    source = TRAINER_MODE_SPELLED_APART.replace('self.mode == "train"', 'self.mode == "fit"')
    outcome = run_program(tmp_path, source)
    assert outcome.error is None and not outcome.diagnoses


def test_a_grad_switch_off_with_backward_outside_a_branch_names_the_block_without_a_spelling(tmp_path):
    source = """
        import torch
        from torch import nn

        def step(model, x, phase):
            with torch.set_grad_enabled(phase == "training"):
                loss = model(x).pow(2).mean()  # LOSS
            loss.backward()

        torch.manual_seed(0)
        step(nn.Linear(3, 1), torch.randn(4, 3), "train")
    """
    outcome = run_as_script(tmp_path, source)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD301"
    assert diagnosis.primary.line == outcome.line("LOSS")
    assert all("compare phase" not in h.message for h in diagnosis.help)
    assert "set_grad_enabled" in diagnosis.help[0].message


# AD308: `for p in params: p -= lr * p.grad` where params = [init_weight(4, 8), ...] and init_weight()
# returns `torch.randn(..., requires_grad=True) / math.sqrt(fan_in)`: the non-leaf was made by the
# helper's return, which was not followed (advice at the update). The list's element is found by
# identity, the helper through the called object, and its one `return` gets requires_grad_() last.

HELPER_RETURNS_CONVERTED = """
    import torch

    def make_param(rows, cols):
        return torch.randn(rows, cols, requires_grad=True).double()  # RETURN

    torch.manual_seed(0)
    weights = (make_param(3, 2), make_param(2, 1))
    x = torch.randn(5, 3, dtype=torch.float64)
    losses = []
    for _ in range(2):
        loss = (x @ weights[0] @ weights[1]).pow(2).mean()
        loss.backward()
        with torch.no_grad():
            for w in weights:
                w.sub_(0.05 * w.grad)  # UPDATE
                w.grad = None
        losses.append(loss.item())
    result = [w.detach().clone() for w in weights]
"""


def test_a_helper_s_return_that_is_not_a_leaf_is_named_and_made_a_leaf(tmp_path):
    outcome = run_as_script(tmp_path, HELPER_RETURNS_CONVERTED)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD308", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("RETURN")
    assert diagnosis.help[0].replacement == "return torch.randn(rows, cols).double().requires_grad_()"
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    twin = run_plain(tmp_path, HELPER_RETURNS_CONVERTED.replace(
        "torch.randn(rows, cols, requires_grad=True).double()",
        "torch.randn(rows, cols).double().detach().requires_grad_()"), "twin.py")
    assert fixed["losses"] == twin["losses"]
    assert all(torch.equal(a, b) for a, b in zip(fixed["result"], twin["result"]))


def test_a_helper_returning_a_leaf_stays_silent(tmp_path):
    source = HELPER_RETURNS_CONVERTED.replace("torch.randn(rows, cols, requires_grad=True).double()",
                                              "torch.randn(rows, cols).double().requires_grad_()")
    outcome = run_program(tmp_path, source)
    assert outcome.error is None and not outcome.diagnoses


# AD235: `jacobian(f, x, strict=True)` of a function whose returned value is computed inside its own
# `with torch.no_grad():` block got advice at the `return`; the block that computed the returned name
# is named and dropped (its body dedented).

VJP_OF_BLOCK_OFF = """
    import torch
    from torch.autograd.functional import vjp

    def energy_direction(x):
        scale = x.pow(2).sum()
        with torch.set_grad_enabled(False):  # BLOCK
            centred = x - x.mean()
            out = centred.pow(2) * scale
        return out

    x = torch.linspace(-1.0, 1.0, 4)
    value, gradient = vjp(energy_direction, x, torch.ones(4), strict=True)
"""


def test_the_grad_off_block_that_computes_the_returned_value_is_dropped(tmp_path):
    outcome = run_as_script(tmp_path, VJP_OF_BLOCK_OFF)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD235", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("BLOCK")
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    x = torch.linspace(-1.0, 1.0, 4).requires_grad_()
    expected = ((x - x.mean()).pow(2) * x.pow(2).sum()).sum()
    (grad,) = torch.autograd.grad(expected, x)
    assert torch.allclose(fixed["gradient"], grad)


def test_a_grad_off_block_whose_value_is_not_returned_stays_silent(tmp_path):
    source = """
        import torch
        from torch.autograd.functional import jacobian

        def f(x):
            with torch.no_grad():
                norm = x.norm()
            return x * 2.0 + norm

        jac = jacobian(f, torch.ones(3), strict=True)
    """
    outcome = run_program(tmp_path, source)
    assert outcome.error is None and not outcome.diagnoses
