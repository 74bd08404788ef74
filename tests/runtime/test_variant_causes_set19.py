"""Causes found by held-out variants set 19 (docs/errors.md, "Held-out variants", set 19), each tested on
another program of the same cause (not the variant) and on a correct near-twin.

AD102: the `torch.no_grad()` help takes along the writes into the same leaf that follow (set 18's
`_following_writes`), but only those whose value is shown to carry no gradient. A value computed by
torch's own functions (`torch.cos(position * frequency)`, `torch.exp(torch.tensor(-1.0))`) or by
methods of tensors that do not require grad (`position.unsqueeze(1)`) carries none when every tensor it
reads carries none; such writes were left out, so the help wrapped the first write alone and the
program failed at the next one (`sinusoid_table_leaf_filled_by_slice_assignment`).

AD235: a function given to a strict transform whose def is decorated with `@torch.no_grad()` (or
`@torch.inference_mode()`, `@torch.set_grad_enabled(False)`) runs wholly without gradients. The
transform was given torch's wrapper, whose code is torch's, so the user's def was not found and
nothing was said (`jacobian_strict_of_no_grad_predict_method`); the wrapper's `__wrapped__` is the
user's def, the decorator is named and its deletion offered."""

from __future__ import annotations

import math

import torch

from helpers import apply_help, run_as_script, run_plain, run_program

TORCH_CALLS_ON_CONSTANTS = """
    import math
    import torch

    def make_weight(rows, cols):
        weight = torch.empty(rows, cols, requires_grad=True)
        bound = 1 / math.sqrt(cols)
        weight.uniform_(-bound, bound)  # WRITE
        weight[0].mul_(torch.exp(torch.tensor(-1.0)))
        weight[:, -1] = torch.linspace(0, 1, rows).sqrt()
        return weight

    torch.manual_seed(0)
    weight = make_weight(3, 4)
    x = torch.randn(2, 4)
    (x @ weight.t()).pow(2).sum().backward()
    result = weight.detach().clone()
    gradient = weight.grad
"""

TORCH_CALL_OF_A_PARAMETER = """
    import torch
    import torch.nn as nn

    torch.manual_seed(0)
    scale = nn.Parameter(torch.ones(4))
    table = torch.zeros(2, 4, requires_grad=True)
    table[0] = 0.5  # WRITE
    table[1] = torch.cos(scale)  # SECOND
"""


def test_writes_of_torch_calls_on_constants_are_taken_along_and_the_help_runs(tmp_path):
    outcome = run_program(tmp_path, TORCH_CALLS_ON_CONSTANTS)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD102", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("WRITE")
    first = diagnosis.help[0]
    assert first.replacement.startswith("with torch.no_grad():\n")
    assert "weight[0].mul_(torch.exp(torch.tensor(-1.0)))" in first.replacement
    assert "torch.linspace(0, 1, rows).sqrt()" in first.replacement and "that follow" in first.message
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    torch.manual_seed(0)
    expected = torch.empty(3, 4)
    bound = 1 / math.sqrt(4)
    expected.uniform_(-bound, bound)
    expected[0].mul_(torch.exp(torch.tensor(-1.0)))
    expected[:, -1] = torch.linspace(0, 1, 3).sqrt()
    x = torch.randn(2, 4)
    leaf = expected.clone().requires_grad_(True)
    (x @ leaf.t()).pow(2).sum().backward()
    assert torch.equal(fixed["result"], expected)
    assert torch.equal(fixed["gradient"], leaf.grad)


def test_a_torch_call_of_a_tensor_with_gradient_is_left_out(tmp_path):
    outcome = run_program(tmp_path, TORCH_CALL_OF_A_PARAMETER)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD102", [d.code for d in outcome.diagnoses]
    first = diagnosis.help[0]
    assert first.replacement == "with torch.no_grad():\n    table[0] = 0.5"
    assert "that follow" not in first.message


INFERENCE_DECORATED_FUNCTION = """
    import torch
    from torch.autograd.functional import vjp

    torch.manual_seed(0)
    weight = torch.randn(3, 2)

    @torch.inference_mode()  # DECORATOR
    def embed(x):
        return torch.tanh(x @ weight)

    x = torch.randn(4, 3)
    out, grad_x = vjp(embed, x, torch.ones(4, 2), strict=True)
"""


def test_a_grad_off_decorator_of_the_transformed_function_is_named_and_removed(tmp_path):
    outcome = run_as_script(tmp_path, INFERENCE_DECORATED_FUNCTION)  # the error leaves watch(), as in a script
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD235", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("DECORATOR")
    first = diagnosis.help[0]
    assert "remove @torch.inference_mode()" in first.message
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    torch.manual_seed(0)
    weight = torch.randn(3, 2)
    x = torch.randn(4, 3).requires_grad_(True)
    torch.tanh(x @ weight).sum().backward()
    assert torch.allclose(fixed["grad_x"], x.grad)
    assert torch.equal(fixed["out"], torch.tanh(x.detach() @ weight))


def test_a_grad_enabling_decorator_stays_silent(tmp_path):
    outcome = run_as_script(tmp_path, INFERENCE_DECORATED_FUNCTION.replace("torch.inference_mode()", "torch.enable_grad()"))
    assert outcome.error is None and not outcome.diagnoses


WARM_UP_STEP_WITHOUT_UPDATE = """
    import torch
    import torch.nn as nn

    def warm_up(model, optimizer, scaler, x):
        scaler.scale(model(x).pow(2).mean()).backward()
        scaler.step(optimizer)  # OTHER

    def train_step(model, optimizer, scaler, x):
        optimizer.zero_grad()
        scaler.scale(model(x).pow(2).mean()).backward()
        scaler.step(optimizer)
        scaler.update()

    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=4.0)
    warm_up(model, optimizer, scaler, torch.randn(4, 3))
    for _ in range(2):
        train_step(model, optimizer, scaler, torch.randn(4, 3))
    result = model
"""


def test_the_other_step_without_update_is_named_and_the_help_runs(tmp_path):
    outcome = run_as_script(tmp_path, WARM_UP_STEP_WITHOUT_UPDATE)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD150", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("OTHER")
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    correct = run_plain(tmp_path, WARM_UP_STEP_WITHOUT_UPDATE.replace(
        "        scaler.step(optimizer)  # OTHER", "        scaler.step(optimizer)\n        scaler.update()"), "correct.py")
    for mine, theirs in zip(fixed["result"].parameters(), correct["result"].parameters()):
        assert torch.equal(mine, theirs)


def test_a_warm_up_step_with_its_update_stays_silent(tmp_path):
    outcome = run_as_script(tmp_path, WARM_UP_STEP_WITHOUT_UPDATE.replace(
        "        scaler.step(optimizer)  # OTHER", "        scaler.step(optimizer)\n        scaler.update()"))
    assert outcome.error is None and not outcome.diagnoses
