"""AD135 where the empty inputs are the parameters of a module that has none (set 31, part B:
momentumnet#21, a custom Function's backward asking `autograd.grad` for the parameters of an
`nn.Tanh()` init function). The change skips the call when there is nothing to ask for; it is
offered only when the module, read in the failing frame, really has no parameter."""

from __future__ import annotations

import os
import sys
import textwrap

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from catalogue import apply_suggestion, marked_line, run_plain, run_watched, write  # noqa: E402

import autograd_doctor  # noqa: E402

# Another shape: per-layer manual gradient accumulation over a Sequential that holds a ReLU.
PER_LAYER = """
    import torch
    from torch import nn

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    loss = (model(x) - y).pow(2).mean()
    manual = {}
    for layer in model:
        params = list(layer.parameters())  # MADE
        grads = torch.autograd.grad(loss, params, retain_graph=True)  # CALL
        for p, g in zip(params, grads):
            manual[p] = manual.get(p, 0) + g
    result = [manual[p] for p in model.parameters()]
"""

CORRECT = PER_LAYER.replace("""        params = list(layer.parameters())  # MADE
""", """        params = list(layer.parameters())  # MADE
        if not params:
            continue
""")


def test_grads_of_a_module_without_parameters_are_skipped(tmp_path):
    source = textwrap.dedent(PER_LAYER)
    error = run_watched(write(tmp_path, source, "program"))
    diagnosis = autograd_doctor.diagnoses_of(error)[0]
    assert diagnosis.code == "AD135"
    assert diagnosis.primary.line == marked_line(source, "MADE")
    assert any("layer (ReLU) has no parameters" in note for note in diagnosis.notes)
    change = diagnosis.help[0]
    assert change.location.line == marked_line(source, "CALL")
    assert change.replacement == "grads = torch.autograd.grad(loss, params, retain_graph=True) if params else ()"
    fixed_error, fixed = run_plain(write(tmp_path, apply_suggestion(source, change), "fixed"))
    assert fixed_error is None
    correct_error, correct = run_plain(write(tmp_path, textwrap.dedent(CORRECT), "correct"))
    assert correct_error is None
    for got, wanted in zip(fixed["result"], correct["result"]):
        assert torch.equal(got, wanted)


def test_a_filter_that_matched_nothing_keeps_the_advice(tmp_path):
    # The module has parameters; the filter is what is wrong: no conditional call is offered.
    source = textwrap.dedent(PER_LAYER).replace("params = list(layer.parameters())  # MADE",
                                                "params = [p for p in layer.parameters() if p.dim() > 5]  # MADE")
    error = run_watched(write(tmp_path, source, "filtered"))
    diagnosis = autograd_doctor.diagnoses_of(error)[0]
    assert diagnosis.code == "AD135"
    assert all(help.replacement is None for help in diagnosis.help)


def test_the_correct_twin_stays_silent(tmp_path):
    assert run_watched(write(tmp_path, textwrap.dedent(CORRECT), "twin")) is None
