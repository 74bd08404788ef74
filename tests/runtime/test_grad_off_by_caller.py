"""AD301 when a caller turned gradients off before the function that computes the loss and calls
backward() was entered (analysis/grad_off_caller.py): a host's set_grad_enabled(False), an
optimizer's step() decorated with @torch.no_grad() that runs the closure, a caller's no_grad
block. The help decorates that function with @torch.enable_grad(); applied, the program trains as
the version that turns gradients on around the function, and the caller keeps its own mode."""

from __future__ import annotations

import textwrap

import torch

import autograd_doctor
from helpers import apply_help, run_as_script, run_plain


def _grad_on_again():
    """The programs below leave gradients off on purpose. They are turned on again where the
    doctor sees it: it remembers set_grad_enabled calls across sessions (a notebook's cells)."""
    with autograd_doctor.watch():
        torch.set_grad_enabled(True)


def _run(tmp_path, source):
    try:
        return run_as_script(tmp_path, source)
    finally:
        _grad_on_again()


def _plain(tmp_path, source, name):
    try:
        return run_plain(tmp_path, source, name)
    finally:
        _grad_on_again()


HOST_SWITCH = """
    import torch
    from torch import nn


    def start_host():
        torch.set_grad_enabled(False)  # SWITCH


    def fit(model, data, steps=4):  # FIT
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for inputs, target in data[:steps]:
            prediction = model(inputs)
            loss = nn.functional.mse_loss(prediction, target)  # LOSS
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        return torch.is_grad_enabled()


    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.Linear(5, 1))
    data = [(torch.randn(8, 3), torch.randn(8, 1)) for _ in range(4)]
    start_host()
    grad_on_inside = fit(model, data)
    result = {"params": [p.detach().clone() for p in model.parameters()], "host_mode": torch.is_grad_enabled(),
              "inside": grad_on_inside}
"""

DECORATED_OPTIMIZER = """
    import torch
    from torch import nn


    class SignDescent(torch.optim.Optimizer):
        def __init__(self, params, lr=0.01):
            super().__init__(params, {"lr": lr})

        @torch.no_grad()  # DECORATOR
        def step(self, closure=None):
            loss = closure() if closure is not None else None  # CALL
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        p.add_(p.grad.sign(), alpha=-group["lr"])
            return loss


    class Trainer:
        def __init__(self):
            torch.manual_seed(1)
            self.model = nn.Linear(4, 2)
            self.optimizer = SignDescent(self.model.parameters())
            self.x, self.y = torch.randn(6, 4), torch.randint(0, 2, (6,))

        def closure(self):  # CLOSURE
            self.optimizer.zero_grad()
            logits = self.model(self.x)
            loss = nn.functional.cross_entropy(logits, self.y)  # LOSS
            loss.backward()
            return loss


    trainer = Trainer()
    losses = [trainer.optimizer.step(trainer.closure).detach() for _ in range(3)]
    result = {"losses": losses, "params": [p.detach().clone() for p in trainer.model.parameters()]}
"""

CALLER_NO_GRAD_BLOCK = """
    import torch
    from torch import nn

    torch.manual_seed(2)
    encoder = nn.Linear(4, 4)
    x = torch.randn(5, 4)


    def adapt(steps=3):  # ADAPT
        optimizer = torch.optim.Adam(encoder.parameters(), lr=0.05)
        for _ in range(steps):
            loss = encoder(x).pow(2).mean()  # LOSS
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


    with torch.no_grad():  # BLOCK
        adapt()
        after = encoder(x)
    result = {"after": after, "after_has_no_history": after.grad_fn is None,
              "params": [p.detach().clone() for p in encoder.parameters()]}
"""


def _intended(source: str, marker: str) -> str:
    """The program as its author meant it: `with torch.enable_grad():` around the marked function's body."""
    lines = textwrap.dedent(source).splitlines()
    index = next(i for i, line in enumerate(lines) if line.rstrip().endswith(f"# {marker}"))
    indent = len(lines[index]) - len(lines[index].lstrip())
    body_end = index + 1
    while body_end < len(lines) and (not lines[body_end].strip() or
                                     len(lines[body_end]) - len(lines[body_end].lstrip()) > indent):
        body_end += 1
    while not lines[body_end - 1].strip():
        body_end -= 1
    body = ["    " + line if line.strip() else line for line in lines[index + 1:body_end]]
    head = " " * (indent + 4) + "with torch.enable_grad():"
    return "\n".join(lines[:index + 1] + [head] + body + lines[body_end:]) + "\n"


def _assert_same_result(fixed: dict, reference: dict) -> None:
    for key, value in reference["result"].items():
        got = fixed["result"][key]
        if isinstance(value, list):
            assert len(got) == len(value) and all(torch.equal(a, b) for a, b in zip(got, value)), key
        elif isinstance(value, torch.Tensor):
            assert torch.equal(got, value), key
        else:
            assert got == value, key


def _check(tmp_path, source: str, function_marker: str):
    outcome = _run(tmp_path, source)
    assert "does not require grad" in str(outcome.error)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD301"]
    decorators = [s for s in diagnosis.help if s.replacement and s.replacement.startswith("@torch.enable_grad()")]
    assert decorators, [s.message for s in diagnosis.help]
    assert decorators[0].location.line == outcome.line(function_marker)
    index = diagnosis.help.index(decorators[0])
    fixed = _plain(tmp_path, apply_help(outcome, index), "fixed.py")
    reference = _plain(tmp_path, _intended(source, function_marker), "reference.py")
    _assert_same_result(fixed, reference)
    return outcome, diagnosis


def test_a_host_switch_before_the_training_function_gets_enable_grad_on_it(tmp_path):
    outcome, diagnosis = _check(tmp_path, HOST_SWITCH, "FIT")
    assert diagnosis.primary.line == outcome.line("SWITCH")
    assert diagnosis.help[0].replacement.startswith("@torch.enable_grad()")  # the switch ends its function
    assert "fit()" in diagnosis.help[0].message


def test_the_host_keeps_its_mode_after_the_decorated_function(tmp_path):
    outcome = _run(tmp_path, HOST_SWITCH)
    namespace = _plain(tmp_path, apply_help(outcome), "fixed.py")
    assert namespace["result"]["inside"] is True
    assert namespace["result"]["host_mode"] is False


def test_a_closure_run_by_a_no_grad_optimizer_step_gets_enable_grad(tmp_path):
    outcome, diagnosis = _check(tmp_path, DECORATED_OPTIMIZER, "CLOSURE")
    # step() is the user's and calls the closure it was given: that call is the line to change
    # (tests/runtime/test_callback_called_with_gradients_off.py); the decorator is the second help.
    assert diagnosis.primary.line == outcome.line("CALL")
    assert any(loc.line == outcome.line("LOSS") for loc in diagnosis.related)
    assert "closure() was entered with gradients already off" in diagnosis.notes[0]
    called_from = [loc for loc in diagnosis.related if loc.role == "called from"]
    assert called_from and called_from[0].line == outcome.line("DECORATOR")
    assert diagnosis.help[0].replacement == \
        "with torch.enable_grad():\n    loss = closure() if closure is not None else None"
    assert diagnosis.help[1].replacement == "@torch.enable_grad()\ndef closure(self):  # CLOSURE"
    fixed = _plain(tmp_path, apply_help(outcome, 0), "fixed_call.py")
    reference = _plain(tmp_path, _intended(DECORATED_OPTIMIZER, "CLOSURE"), "reference_call.py")
    _assert_same_result(fixed, reference)


def test_a_training_function_called_inside_a_callers_no_grad_block_gets_enable_grad(tmp_path):
    outcome, diagnosis = _check(tmp_path, CALLER_NO_GRAD_BLOCK, "ADAPT")
    assert diagnosis.primary.line == outcome.line("LOSS")
    assert any(loc.line == outcome.line("BLOCK") for loc in diagnosis.related)
    fixed = _plain(tmp_path, apply_help(outcome), "fixed.py")
    assert fixed["result"]["after_has_no_history"]  # the caller's block still computes without history


def test_a_switch_made_inside_the_function_gets_no_enable_grad_decorator(tmp_path):
    source = HOST_SWITCH.replace("    start_host()\n    grad_on_inside", "    grad_on_inside").replace(
        "        optimizer = torch.optim.SGD", "        start_host()\n        optimizer = torch.optim.SGD")
    outcome = _run(tmp_path, source)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD301"]
    assert not any(s.replacement and "enable_grad" in s.replacement for s in diagnosis.help)


def test_a_loss_computed_by_the_caller_gets_no_enable_grad_decorator(tmp_path):
    source = """
        import torch
        from torch import nn

        model = nn.Linear(3, 1)


        def step(loss):
            loss.backward()


        with torch.no_grad():
            step(model(torch.randn(2, 3)).sum())
    """
    outcome = _run(tmp_path, source)
    assert "does not require grad" in str(outcome.error)
    for diagnosis in outcome.diagnoses:
        assert not any(s.replacement and "enable_grad" in s.replacement for s in diagnosis.help)
