"""Every help with code is applied to the buggy program exactly as printed, and the
program then runs and computes what a hand-written correct version computes.

A help that runs but computes something else (`p = p - lr * p.grad` in a loop over the
parameters updates nothing) fails here, as does one that does not run at all.
"""

from __future__ import annotations

import textwrap

import pytest
import torch

from autograd_doctor.analysis.fixes import apply_replacement
from cases import ADVICE_ONLY, CASES
from helpers import run_plain, run_program


def _same(a, b) -> bool:
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.shape == b.shape and torch.allclose(a, b, rtol=1e-5, atol=1e-6)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def _values(namespace: dict, expressions: list[str]) -> list:
    return [eval(expression, dict(namespace)) for expression in expressions]


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_each_help_applied_gives_the_reference_result(tmp_path, case):
    outcome = run_program(tmp_path, case.buggy, **case.watch_options)
    diagnoses = [d for d in outcome.diagnoses if d.code == case.code]
    assert diagnoses, f"expected {case.code}, got {[d.code for d in outcome.diagnoses]} ({outcome.error!r})"
    diagnosis = diagnoses[0]
    applicable = [(index, s) for index, s in enumerate(diagnosis.help) if s.replacement and s.location]
    assert applicable, f"no help with code: {[s.message for s in diagnosis.help]}"
    for index, suggestion in applicable:
        fixed = apply_replacement(outcome.source, suggestion.location, suggestion.replacement)
        reference = textwrap.dedent(case.reference_for.get(index, case.reference))
        expected = _values(run_plain(tmp_path, reference, "reference.py"), case.compare)
        try:
            got = _values(run_plain(tmp_path, fixed, f"fixed_{index}.py"), case.compare)
        except Exception as error:
            raise AssertionError(f"help {index} ({suggestion.message}) fails:\n{fixed}\n{error!r}") from error
        for expression, want, have in zip(case.compare, expected, got):
            assert _same(have, want), f"help {index} ({suggestion.message}): {expression} differs\n{fixed}"


def test_the_harness_rejects_a_help_that_updates_nothing(tmp_path):
    """The rebinding the doctor used to suggest in a loop over parameters runs, but the
    comparison catches that it leaves the weights unchanged."""
    case = next(c for c in CASES if c.name == "manual_sgd_loop")
    wrong = textwrap.dedent(case.buggy).replace("p -= lr * p.grad", "p = p - lr * p.grad")
    got = _values(run_plain(tmp_path, wrong, "wrong.py"), case.compare)
    expected = _values(run_plain(tmp_path, textwrap.dedent(case.reference), "reference.py"), case.compare)
    assert not _same(got, expected)


@pytest.mark.parametrize("case", ADVICE_ONLY, ids=[case.name for case in ADVICE_ONLY])
def test_diagnoses_without_a_verified_change_give_advice_not_code(tmp_path, case):
    outcome = run_program(tmp_path, case.buggy, **case.watch_options)
    diagnoses = [d for d in outcome.diagnoses if d.code == case.code]
    assert diagnoses, f"expected {case.code}, got {[d.code for d in outcome.diagnoses]} ({outcome.error!r})"
    assert diagnoses[0].help and all(s.replacement is None for s in diagnoses[0].help)


def test_retain_graph_is_not_offered_across_an_in_place_write(tmp_path):
    """The help it replaces, applied, fails with PyTorch's in-place error: the harness shows it."""
    case = next(c for c in ADVICE_ONLY if c.name == "in_place_update_between_two_backwards")
    outcome = run_program(tmp_path, case.buggy)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD302"]
    assert not any("retain_graph" in s.message for s in diagnosis.help)
    write_line = next(n for n, text in enumerate(outcome.source.splitlines(), 1) if "w.mul_(" in text)
    assert any(f"line {write_line} writes w in place" in note for note in diagnosis.notes), diagnosis.notes
    with_retain = textwrap.dedent(case.buggy).replace("loss1.backward()", "loss1.backward(retain_graph=True)")
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        run_plain(tmp_path, with_retain, "with_retain.py")


def test_a_tensor_that_alone_trains_a_layer_is_not_detached(tmp_path):
    """AD302 on a tensor made before the loop: detaching it is offered when it is a fixed
    target, but not when some weights get their gradient only through it (a layer applied
    once before the loop): there the help computes it in each iteration (set 6's DDPM case
    got the detach, which left the layer untrained)."""
    case = next(case for case in CASES if case.name == "layer_applied_once_before_the_loop")
    outcome = run_program(tmp_path, case.buggy)
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD302")
    replacements = [s.replacement for s in diagnosis.help if s.replacement]
    assert replacements and not any(".detach()" in r for r in replacements), replacements
    assert any("get their gradient only through features" in note for note in diagnosis.notes), diagnosis.notes


EVOLVED_STATE = """
    import torch
    torch.manual_seed(0)


    class Evolving(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.start = torch.nn.Parameter(torch.randn(3, 3))
            self.cell = torch.nn.GRUCell(3, 3)
            self.state = None

        def forward(self, x):
            if self.state is None:
                self.state = self.start.clone()
            self.state = self.cell(self.state, self.state)
            return x @ self.state


    model = Evolving()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(2):
        loss = sum(model(torch.randn(2, 3)).pow(2).mean() for _ in range(3))
        opt.zero_grad()
        loss.backward()
        opt.step()
"""

CARRIED_HIDDEN = """
    import torch
    torch.manual_seed(0)


    class Stateful(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.cell = torch.nn.GRUCell(3, 3)
            self.hidden = torch.zeros(2, 3)

        def forward(self, x):
            self.hidden = self.cell(x, self.hidden)
            return self.hidden


    model = Stateful()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(3):
        loss = model(torch.randn(2, 3)).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
"""


def test_a_kept_state_that_alone_trains_its_starting_value_is_not_detached(tmp_path):
    """AD302 on a state a module keeps on itself: detaching it after storing it is offered for a
    hidden state (truncated backpropagation: every weight still gets gradients from each step),
    but not when a weight gets its gradient only through the carried state (a start value that
    is a parameter; set 6's EvolveGCN case got the detach, which left the start value
    untrained): there the state is started again each iteration, with the None `__init__`
    gives it, and the line named is the one that carries it (`self.state = self.cell(self.state, ...)`)."""
    outcome = run_program(tmp_path, EVOLVED_STATE)
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD302")
    assert not [s for s in diagnosis.help if s.replacement and ".detach()" in s.replacement], \
        [s.replacement for s in diagnosis.help]
    assert diagnosis.help[0].replacement.splitlines()[0] == "model.state = None", diagnosis.help[0].replacement
    assert diagnosis.primary.line == 16  # self.state = self.cell(self.state, self.state)
    outcome = run_program(tmp_path, CARRIED_HIDDEN, name="hidden.py")
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD302")
    assert any(s.replacement and "self.hidden = self.hidden.detach()" in s.replacement for s in diagnosis.help), \
        [s.replacement for s in diagnosis.help]
