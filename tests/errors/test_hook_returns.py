"""AD319: a backward hook returned gradients that do not match the ones it replaces (set 31,
part B: TransformerLens#1160's bare tensor from a full backward hook, feedback alignment's
register_backward_hook that indexes grad_input for addmm on layers without a bias). Each shape
here is another program of the same cause; the correct twins stay silent."""

from __future__ import annotations

import os
import sys
import textwrap

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from catalogue import apply_suggestion, marked_line, run_plain, run_watched, write  # noqa: E402

import autograd_doctor  # noqa: E402


def _diagnose(tmp_path, source, name="program"):
    source = textwrap.dedent(source)
    path = write(tmp_path, source, name)
    error = run_watched(path)
    assert error is not None
    return source, path, autograd_doctor.diagnoses_of(error)


def _result(tmp_path, source, name):
    error, namespace = run_plain(write(tmp_path, source, name))
    assert error is None, error
    return namespace["result"]


# A gradient-clipping hook on a block that takes one tensor, returning the clipped gradient bare:
# with a batch of 8 PyTorch unpacks it into 8 "gradients" (the Python-side count check).
CLIPPED_BLOCK = """
    import torch
    from torch import nn

    torch.manual_seed(0)


    class Residual(nn.Module):
        def __init__(self, width):
            super().__init__()
            self.fc = nn.Linear(width, width)

        def forward(self, x):
            return x + torch.tanh(self.fc(x))


    def clip_hook(module, grad_input, grad_output):
        return grad_output[0].clamp(-0.01, 0.01)  # RETURN


    net = nn.Sequential(nn.Linear(5, 6), Residual(6), nn.Linear(6, 1))
    net[1].register_full_backward_hook(clip_hook)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    losses = []
    for step in range(4):
        x, y = torch.randn(8, 5), torch.randn(8, 1)
        loss = (net(x) - y).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    result = [torch.stack(losses)] + [p.detach().clone() for p in net.parameters()]
"""


def test_full_hook_returning_a_bare_tensor_is_named_and_wrapped(tmp_path):
    source, path, diagnoses = _diagnose(tmp_path, CLIPPED_BLOCK)
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD319"
    assert diagnosis.primary.line == marked_line(source, "RETURN")
    assert any("it returned a Tensor" in note for note in diagnosis.notes)
    change = diagnosis.help[0]
    assert change.replacement.splitlines()[-1] == \
        "return (returned,) if isinstance(returned, torch.Tensor) else returned"
    fixed = apply_suggestion(source, change)
    correct = source.replace("return grad_output[0].clamp(-0.01, 0.01)  # RETURN",
                             "return (grad_output[0].clamp(-0.01, 0.01),)  # RETURN")
    for got, wanted in zip(_result(tmp_path, fixed, "fixed"), _result(tmp_path, correct, "correct")):
        assert torch.equal(got, wanted)


def test_full_hook_returning_a_tuple_stays_silent(tmp_path):
    source = textwrap.dedent(CLIPPED_BLOCK).replace("return grad_output[0].clamp(-0.01, 0.01)",
                                                    "return (grad_output[0].clamp(-0.01, 0.01),)")
    assert run_watched(write(tmp_path, source, "twin")) is None


# A hook written for nn.Linear *with* a bias (addmm: bias, input, weight.T) that replaces the
# input's gradient by a feedback-alignment one, registered on layers built without a bias.
OLD_STYLE = """
    import warnings
    import torch
    from torch import nn
    warnings.simplefilter("ignore")

    torch.manual_seed(0)
    feedback = {}


    def feedback_hook(module, grad_input, grad_output):
        return (grad_input[0], grad_output[0] @ feedback[module]) + grad_input[2:]  # RETURN


    layers = [nn.Linear(4, 8, bias=BIAS), nn.Linear(8, 2, bias=BIAS)]
    for layer in layers:
        feedback[layer] = torch.randn(layer.out_features, layer.in_features)
        layer.register_backward_hook(feedback_hook)
    x = torch.randn(3, 4, requires_grad=True)
    out = layers[1](torch.relu(layers[0](x)))
    out.pow(2).sum().backward()
    result = [layer.weight.grad for layer in layers]
"""


def test_old_style_hook_indexing_addmm_on_layers_without_bias(tmp_path):
    source, path, diagnoses = _diagnose(tmp_path, OLD_STYLE.replace("BIAS", "False"))
    diagnosis = diagnoses[0]
    assert diagnosis.code == "AD319"
    assert diagnosis.primary.line == marked_line(source, "RETURN")
    assert any("without a bias" in note and "(input, weight.T)" in note for note in diagnosis.notes)
    assert all(help.replacement is None for help in diagnosis.help)  # advice: the layout is the user's call
    assert any(related.role == "registered" for related in diagnosis.related)


def test_old_style_hook_on_layers_with_a_bias_stays_silent(tmp_path):
    source = textwrap.dedent(OLD_STYLE.replace("BIAS", "True"))
    assert run_watched(write(tmp_path, source, "twin")) is None


def test_the_set31_bare_tensor_case_gets_a_help_that_gives_the_correct_result(tmp_path):
    here = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bug_reports", "fresh", "set31")
    name = "b_hookpoint_backward_hook_returns_bare_tensor"
    with open(os.path.join(here, "cases", name + ".py"), encoding="utf-8") as stream:
        source = stream.read()
    path = write(tmp_path, source, "case")
    diagnosis = autograd_doctor.diagnoses_of(run_watched(path))[0]
    assert diagnosis.code == "AD319"
    lines = source.splitlines()
    assert lines[diagnosis.primary.line - 1].strip() == "return hook(module_output[0], hook=self)"
    fixed = _result(tmp_path, apply_suggestion(source, diagnosis.help[0]), "fixed")
    with open(os.path.join(here, "correct", name + ".py"), encoding="utf-8") as stream:
        correct = _result(tmp_path, stream.read(), "correct")
    for key in ("losses", "grad_norms"):
        assert torch.equal(fixed[key], correct[key])
    for got, wanted in zip(fixed["params"], correct["params"]):
        assert torch.equal(got, wanted)
