"""Causes found by held-out variants set 20 (docs/errors.md, "Held-out variants", set 20), each tested on
another program of the same cause (not the variant) and on a correct near-twin.

AD301: a `with` statement of several items, one of which turns gradients off (`with torch.autocast(...),
torch.no_grad():`), was read as if its first item were the grad-off one: the report said "inside
`torch.autocast(...)` autograd records nothing" and the help dropped the whole statement, taking the line
out of autocast too (`training_step_context_copied_from_eval_with_autocast`, a wrong help). The grad-off
item is named, and the help drops that item alone from the header.

AD115: `disc[0].weight.requires_grad = False` on a layer under torch.nn.utils.parametrizations: the
parametrized attribute was found only through names and attributes, not through a constant item of a
container (`disc[0]`, `layers[-1]`), and the help detached the computed weight (wrong). `value_of` now
reads a constant item of a list, tuple, dict or of torch's own module and parameter containers (a
subclass that overrides the lookup is not read).

AD308: a hand-written update over `[model.temperature, model.bias]` where `temperature` is a @property
computing a tensor from one parameter (`return self.log_t.exp()`) was called AD309, "frozen"; the property
is followed to the parameter its getter reads, and the element becomes that parameter.

AD234: `return StepOutput(loss, logits, correct)`, a named tuple of three fields returned under
`has_aux=True`, was read as one value ("there is no auxiliary value", false) and got advice; a call of a
named tuple class of the function's module is read as the tuple of its fields (positional or by name),
and gets the help of three values side by side.

AD239: an integer tangent for a primal converted on the call itself (`jvp(f, (counts.float(),),
(direction,))`) got advice only, since only names were matched; the tangent now gets the primal's
conversion (`direction.float()`, `.to(torch.float64)`).

AD238: make_dual() run by a call (a constructor, a helper) on the line just before `with dual_level():`
got advice at the make_dual line; the caller's statement is named, and moved into the block as its first
statement."""

from __future__ import annotations

import torch

from helpers import apply_help, run_as_script, run_plain, run_program

TIMED_NO_GRAD = """
    import contextlib
    import time

    import torch
    from torch import nn

    @contextlib.contextmanager
    def timed(log):
        start = time.perf_counter()
        yield
        log.append(time.perf_counter() - start)

    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    log = []
    x, y = torch.randn(4, 3), torch.randn(4, 1)
    with torch.no_grad(), timed(log) as _:  # HEADER
        out = model(x)
    loss = ((out - y) ** 2).mean()
    loss.backward()
    result = model
    timings = len(log)
"""

TIMED_NO_GRAD_TWIN = """
    import contextlib
    import time

    import torch
    from torch import nn

    @contextlib.contextmanager
    def timed(log):
        start = time.perf_counter()
        yield
        log.append(time.perf_counter() - start)

    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    log = []
    x, y = torch.randn(4, 3), torch.randn(4, 1)
    with timed(log), torch.autocast("cpu", dtype=torch.bfloat16):
        out = model(x).float()
    with torch.no_grad(), timed(log):
        metric = (model(x) - y).abs().mean()
    loss = ((out - y) ** 2).mean()
    loss.backward()
    result = model
"""


def test_only_the_grad_off_item_of_a_with_statement_is_named_and_dropped(tmp_path):
    outcome = run_program(tmp_path, TIMED_NO_GRAD)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD301", [d.code for d in outcome.diagnoses]
    assert "inside `torch.no_grad()`" in diagnosis.primary.note
    first = diagnosis.help[0]
    assert first.location.line == outcome.line("HEADER")
    assert first.replacement == "with timed(log) as _:"
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    assert fixed["timings"] == 1
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    x, y = torch.randn(4, 3), torch.randn(4, 1)
    ((model(x) - y) ** 2).mean().backward()
    assert torch.equal(fixed["result"].weight.grad, model.weight.grad)


def test_a_grad_off_item_around_a_metric_stays_silent(tmp_path):
    outcome = run_program(tmp_path, TIMED_NO_GRAD_TWIN)
    assert outcome.error is None and not outcome.diagnoses


WEIGHT_NORM_IN_MODULE_LIST = """
    import torch
    from torch import nn
    from torch.nn.utils.parametrizations import weight_norm

    torch.manual_seed(0)
    layers = nn.ModuleList([weight_norm(nn.Linear(3, 3)), nn.Linear(3, 1)])
    layers[0].weight.requires_grad_(False)  # FREEZE
    x = torch.randn(4, 3)
    loss = layers[1](torch.tanh(layers[0](x))).pow(2).mean()
    loss.backward()
    result = layers
"""


def test_a_parametrized_weight_read_through_a_container_item_gets_its_parametrization(tmp_path):
    outcome = run_as_script(tmp_path, WEIGHT_NORM_IN_MODULE_LIST)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD115", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("FREEZE")
    assert diagnosis.help[0].replacement == "layers[0].parametrizations.weight.requires_grad_(False)"
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")["result"]
    holder = fixed[0].parametrizations.weight
    assert holder.original0.grad is None and holder.original1.grad is None
    assert fixed[0].bias.grad is not None and fixed[1].weight.grad is not None


def test_the_parametrization_frozen_as_written_stays_silent(tmp_path):
    source = WEIGHT_NORM_IN_MODULE_LIST.replace("layers[0].weight.requires_grad_(False)",
                                                "layers[0].parametrizations.weight.requires_grad_(False)")
    outcome = run_program(tmp_path, source)
    assert outcome.error is None and not outcome.diagnoses


KERNEL_PROPERTY = """
    import torch
    from torch import nn

    class RBFKernel(nn.Module):
        def __init__(self):
            super().__init__()
            self.raw_lengthscale = nn.Parameter(torch.tensor(0.5))
            self.variance = nn.Parameter(torch.tensor(1.0))

        @property
        def lengthscale(self):
            \"\"\"Positive by construction.\"\"\"
            return nn.functional.softplus(self.raw_lengthscale)

        def forward(self, a, b):
            return self.variance * torch.exp(-torch.cdist(a, b) ** 2 / (2 * self.lengthscale ** 2))

    torch.manual_seed(0)
    kernel = RBFKernel()
    x, y = torch.randn(6, 2), torch.randn(6)
    for _ in range(2):
        kernel.zero_grad()
        loss = (kernel(x, x) @ y - y).pow(2).mean()
        loss.backward()
        with torch.no_grad():
            for p in (kernel.lengthscale, kernel.variance):  # LOOP
                p -= 0.01 * p.grad
    result = kernel
"""


def test_a_property_computed_from_one_parameter_is_replaced_by_the_parameter(tmp_path):
    outcome = run_as_script(tmp_path, KERNEL_PROPERTY)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD308", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("LOOP")
    assert diagnosis.help[0].replacement == "for p in (kernel.raw_lengthscale, kernel.variance):"
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")["result"]
    expected = run_plain(tmp_path, KERNEL_PROPERTY.replace("(kernel.lengthscale, kernel.variance)",
                                                           "(kernel.raw_lengthscale, kernel.variance)"),
                         "correct.py")["result"]
    assert torch.equal(fixed.raw_lengthscale, expected.raw_lengthscale)
    assert torch.equal(fixed.variance, expected.variance)


def test_the_loop_over_the_parameters_stays_silent(tmp_path):
    source = KERNEL_PROPERTY.replace("(kernel.lengthscale, kernel.variance)", "(kernel.raw_lengthscale, kernel.variance)")
    outcome = run_program(tmp_path, source)
    assert outcome.error is None and not outcome.diagnoses


def test_a_property_of_a_frozen_parameter_is_not_called_computed(tmp_path):
    source = KERNEL_PROPERTY.replace("nn.Parameter(torch.tensor(0.5))", "nn.Parameter(torch.tensor(0.5), requires_grad=False)")
    outcome = run_as_script(tmp_path, source)
    assert outcome.diagnosis.code == "AD309", [d.code for d in outcome.diagnoses]


NAMED_OUTPUT_UNDER_VJP = """
    from collections import namedtuple

    import torch
    from torch.func import vjp

    Result = namedtuple("Result", ["energy", "forces", "size"])

    def energy_of(positions):
        energy = positions.pow(2).sum()
        return Result(energy, forces=-2 * positions, size=positions.norm())  # RETURN

    positions = torch.randn(4, 3)
    energy, pullback, aux = vjp(energy_of, positions, has_aux=True)
    (gradient,) = pullback(torch.ones_like(energy))
    forces, size = aux
"""


AD234_NOTE = "returns a Result, a named tuple: 3 values side by side"


def test_a_named_tuple_returned_under_has_aux_is_read_as_its_fields(tmp_path):
    outcome = run_as_script(tmp_path, NAMED_OUTPUT_UNDER_VJP)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD234", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("RETURN")
    assert diagnosis.primary.note == AD234_NOTE
    assert diagnosis.help[0].replacement == "return energy, (-2 * positions, positions.norm())"
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    assert torch.equal(fixed["gradient"], 2 * fixed["positions"])
    assert torch.equal(fixed["forces"], -2 * fixed["positions"]) and torch.equal(fixed["size"], fixed["positions"].norm())


def test_a_named_pair_returned_under_has_aux_stays_silent(tmp_path):
    source = NAMED_OUTPUT_UNDER_VJP.replace('["energy", "forces", "size"]', '["energy", "aux"]').replace(
        "Result(energy, forces=-2 * positions, size=positions.norm())",
        "Result(energy, aux=(-2 * positions, positions.norm()))")
    outcome = run_program(tmp_path, source)
    assert outcome.error is None and not outcome.diagnoses


CONVERTED_PRIMAL = """
    import torch
    from torch.func import jvp

    def smooth(values):
        return torch.sin(values).cumsum(0)

    labels = torch.tensor([3, 1, 4, 1, 5])
    direction = torch.zeros_like(labels)
    direction[2] = 1
    output, tangent = jvp(smooth, (labels.to(torch.float64),), (direction,))  # CALL
"""


def test_an_integer_tangent_of_a_primal_converted_on_the_call_gets_the_same_conversion(tmp_path):
    outcome = run_as_script(tmp_path, CONVERTED_PRIMAL)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD239", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("CALL")
    assert diagnosis.help[0].replacement == (
        "output, tangent = jvp(smooth, (labels.to(torch.float64),), (direction.to(torch.float64),))")
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    values = torch.tensor([3.0, 1.0, 4.0, 1.0, 5.0], dtype=torch.float64)
    expected = torch.cos(values) * torch.tensor([0.0, 0.0, 1.0, 0.0, 0.0], dtype=torch.float64)
    assert torch.equal(fixed["tangent"], expected.cumsum(0))


def test_a_floating_point_tangent_of_a_converted_primal_stays_silent(tmp_path):
    source = CONVERTED_PRIMAL.replace("torch.zeros_like(labels)", "torch.zeros_like(labels, dtype=torch.float64)")
    outcome = run_program(tmp_path, source)
    assert outcome.error is None and not outcome.diagnoses


DUAL_MADE_BY_A_HELPER_BEFORE_THE_LEVEL = """
    import torch
    import torch.autograd.forward_ad as forward_ad
    from torch.autograd.forward_ad import dual_level

    def dual_input(x, axis):
        direction = torch.zeros_like(x)
        direction[..., axis] = 1.0
        return forward_ad.make_dual(x, direction)

    def sensitivities(f, x):
        found = []
        for axis in range(x.shape[-1]):
            dual = dual_input(x, axis)  # CALL
            with dual_level():
                out = f(dual)
                found.append(forward_ad.unpack_dual(out).tangent)
        return found

    x = torch.tensor([[0.5, -1.0], [2.0, 0.0]])
    slopes = sensitivities(lambda t: torch.tanh(t).sum(-1), x)
"""


def test_a_call_that_makes_the_dual_just_before_the_level_is_moved_into_it(tmp_path):
    outcome = run_as_script(tmp_path, DUAL_MADE_BY_A_HELPER_BEFORE_THE_LEVEL)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD238", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("CALL")
    assert diagnosis.help[0].replacement == (
        "with dual_level():\n    dual = dual_input(x, axis)  # CALL\n    out = f(dual)\n"
        "    found.append(forward_ad.unpack_dual(out).tangent)")
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    x = torch.tensor([[0.5, -1.0], [2.0, 0.0]])
    derivative = 1 - torch.tanh(x) ** 2
    for axis, slope in enumerate(fixed["slopes"]):
        assert torch.allclose(slope, derivative[:, axis])


def test_the_call_inside_the_level_stays_silent(tmp_path):
    source = DUAL_MADE_BY_A_HELPER_BEFORE_THE_LEVEL.replace(
        "            dual = dual_input(x, axis)  # CALL\n            with dual_level():\n",
        "            with dual_level():\n                dual = dual_input(x, axis)\n")
    assert "dual = dual_input(x, axis)\n" in source
    outcome = run_program(tmp_path, source)
    assert outcome.error is None and not outcome.diagnoses
