"""`torch.jit.script` compiles the same code under the doctor as without it.

TorchScript compiles a call to a torch function (`torch.ones_like`, `torch.zeros`,
`torch.relu_`) as its aten op when it finds the function in its table of builtins, by the
function's id. The doctor replaces some of these functions by wrappers while it is on (the
factories, the in-place functions); without an entry of their own, `torch.jit.script` of a
module calling them failed under the doctor with "TypeError: module, class, method, function,
traceback, frame, or code object was expected, got builtin_function_or_method" (every
TorchScript test of pytorch-crf failed under `pytest --autograd-doctor`, docs/real-code.md).
"""

from __future__ import annotations

import warnings

import pytest
import torch
from torch.jit import _builtins as script_builtins

import autograd_doctor


def _fresh_function():
    """A new function object each call: TorchScript caches what it compiled per function."""

    def shifted(x: torch.Tensor) -> torch.Tensor:
        y = torch.ones_like(x) + torch.zeros(x.shape) + torch.tensor(0.5)
        return torch.relu_(y - x)

    return shifted


class _Tagger(torch.nn.Module):
    """A module whose forward calls wrapped torch functions, as pytorch-crf's CRF does."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mask = torch.ones_like(x, dtype=torch.bool)
        return torch.where(mask, x, torch.zeros_like(x)).sigmoid_()


@pytest.mark.parametrize("mode", ["light", "full"])
def test_a_function_scripted_under_the_doctor_compiles_and_computes_the_same(mode):
    x = torch.randn(5)
    expected = _fresh_function()(x)
    with autograd_doctor.watch(mode=mode):
        scripted = torch.jit.script(_fresh_function())
        inside = scripted(x)
    assert torch.equal(inside, expected)
    assert torch.equal(scripted(x), expected)


@pytest.mark.parametrize("strict", [False, True])
def test_a_module_scripted_under_the_doctor_runs_there_and_after_it(strict):
    x = torch.randn(3, 4)
    expected = _Tagger()(x)
    with autograd_doctor.watch(strict=strict):
        inside = torch.jit.script(_Tagger())(x)
    after = torch.jit.script(_Tagger())(x)
    assert torch.equal(inside, expected) and torch.equal(after, expected)


def test_the_doctor_leaves_torchscripts_table_of_builtins_as_it_found_it():
    table = script_builtins._get_builtin_table()
    before = dict(table)
    original = torch.ones_like
    with autograd_doctor.watch(mode="full"):
        assert torch.ones_like is not original  # the doctor's wrapper is installed ...
        assert script_builtins._find_builtin(torch.ones_like) == "aten::ones_like"
    assert torch.ones_like is original
    assert table == before  # ... and its entry is gone with it (a freed wrapper's id may be reused)


class _Regrouper(torch.nn.Module):
    """Views of an intermediate that requires grad, as einops' Rearrange layer makes."""

    def __init__(self):
        super().__init__()
        self.mix = torch.nn.Linear(12, 12)
        self.head = torch.nn.Linear(12, 4)

    def forward(self, x):
        grouped = self.mix(x).reshape(x.shape[0], 3, 4).permute(0, 2, 1)
        return self.head(grouped.reshape(grouped.shape[0], -1))


@pytest.mark.parametrize("mode", ["light", "full"])
def test_torch_jit_trace_passes_its_own_check_under_the_doctor(mode):
    # The tracer checks its graph against a second trace without grad (einops' test_torch_layer
    # failed it in the full mode: "Graphs differed across invocations").
    torch.manual_seed(0)
    model, x = _Regrouper(), torch.randn(5, 12)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with autograd_doctor.watch(mode=mode):
            traced = torch.jit.trace(model, example_inputs=x)  # check_trace=True: raises if they differ
            assert torch.equal(traced(x), model(x))
    # The tracer warns about what it records; nothing of ours is recorded (the module tracker's
    # read of `numel()` drew "TracerWarning: Converting a tensor to a Python boolean").
    assert [str(w.message) for w in caught if "autograd_doctor" in w.filename] == []


def test_torch_compile_with_fullgraph_runs_under_the_doctor():
    # The doctor's global module hooks are traced inside every compiled module: reading
    # `grad_fn` there broke the graph, an error under fullgraph=True (einops'
    # test_torch_compile_for_layers).
    torch.manual_seed(0)
    model, x = _Regrouper(), torch.randn(5, 12)
    expected = model(x)
    compiled = torch.compile(model, fullgraph=True, backend="eager")
    with autograd_doctor.watch():
        out = compiled(x)
        out.sum().backward()
    assert torch.allclose(out, expected)
    assert model.mix.weight.grad is not None


def _compiled_call_warnings(register_own_hook: bool) -> list[str]:
    torch.manual_seed(0)
    model, x = torch.nn.Linear(3, 2), torch.randn(4, 3)
    compiled = torch.compile(model, backend="eager")
    with autograd_doctor.watch():
        model(x).sum().backward()  # the gradient-path check's module hooks are registered from here
        own = torch.nn.modules.module.register_module_forward_hook(lambda module, args, output: None)
        if not register_own_hook:
            own.remove()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            compiled(x).sum().backward()
        own.remove()
    return [str(w.message) for w in caught if "global hooks on modules" in str(w.message)]


def test_a_compiled_module_does_not_warn_about_the_doctors_global_module_hooks():
    # torch warns at each call of a `torch.compile`d module while a global module hook is
    # registered; the doctor's own hooks printed that warning into einops' suite.
    plain_test = torch.nn.modules.module._has_any_global_hook
    assert _compiled_call_warnings(register_own_hook=False) == []
    assert torch.nn.modules.module._has_any_global_hook is plain_test  # torch's own test is back


def test_a_compiled_module_still_warns_about_the_programs_own_global_hook():
    assert len(_compiled_call_warnings(register_own_hook=True)) == 1
