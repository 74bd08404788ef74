"""AD102 where the leaf written in place is an entry of a dict or list (set 28 part B's
torchbearer#431: without a criterion the framework starts the loss at `torch.zeros(1,
requires_grad=True)`, and its callback does `state[LOSS] += func(state)`). The written name is a
dict, which has no clone(): the help used to be `state = state.clone()`, which does not run. The
entry is the tensor; where nothing trains the leaf it holds (an accumulator started as a leaf),
the change is to combine out of place, `state[LOSS] = state[LOSS] + ...`. A trained leaf in a
container gets no such rewrite."""

from __future__ import annotations

import torch

from helpers import apply_help, run_plain, run_program

CALLBACK_LOSS = """
    import torch

    torch.manual_seed(0)
    LOSS = "loss"


    def add_to_loss(func):
        def callback(state):
            state[LOSS] += func(state)  # WRITE
        return callback


    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    callbacks = [add_to_loss(lambda s: s["pred"].pow(2).mean()), add_to_loss(lambda s: s["pred"].abs().mean())]
    losses = []
    for step in range(3):
        state = {"pred": model(torch.randn(6, 4)), LOSS: torch.zeros(1, requires_grad=True)}
        for callback in callbacks:
            callback(state)
        optimizer.zero_grad()
        state[LOSS].backward()
        optimizer.step()
        losses.append(state[LOSS].detach())
    result = [torch.cat(losses), *[p.detach().clone() for p in model.parameters()]]
"""

CORRECT = CALLBACK_LOSS.replace("state[LOSS] += func(state)  # WRITE", "state[LOSS] = state[LOSS] + func(state)  # WRITE")

# Another shape: a list of loss terms whose first entry is the accumulator.
LIST_TERMS = """
    import torch

    torch.manual_seed(1)
    encoder = torch.nn.Linear(3, 2)
    optimizer = torch.optim.Adam(encoder.parameters(), lr=0.01)
    x = torch.randn(5, 3)
    terms = [torch.zeros((), requires_grad=True)]
    for penalty in (0.1, 0.2):
        terms[0] -= penalty * encoder(x).pow(2).sum()  # WRITE
    optimizer.zero_grad()
    terms[0].backward()
    optimizer.step()
    result = [p.detach().clone() for p in encoder.parameters()]
"""


def test_the_entry_is_named_and_combined_out_of_place(tmp_path):
    outcome = run_program(tmp_path, CALLBACK_LOSS)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD102", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("WRITE")
    assert diagnosis.tensor.name == "state[LOSS]"
    assert diagnosis.help[0].replacement == "state[LOSS] = state[LOSS] + func(state)"
    assert "clone" not in "".join(h.replacement or "" for h in diagnosis.help)


def test_the_help_applied_equals_the_correct_version(tmp_path):
    outcome = run_program(tmp_path, CALLBACK_LOSS)
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    correct = run_plain(tmp_path, CORRECT, "correct.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["result"], correct["result"]))


def test_the_correct_version_stays_silent(tmp_path):
    outcome = run_program(tmp_path, CORRECT)
    assert outcome.error is None and not outcome.diagnoses, [d.code for d in outcome.diagnoses]


def test_a_list_entry_accumulator_in_another_shape(tmp_path):
    outcome = run_program(tmp_path, LIST_TERMS)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD102", [d.code for d in outcome.diagnoses]
    assert diagnosis.help[0].replacement == "terms[0] = terms[0] - (penalty * encoder(x).pow(2).sum())"
    intended = LIST_TERMS.replace("terms[0] -= penalty * encoder(x).pow(2).sum()  # WRITE",
                                  "terms[0] = terms[0] - penalty * encoder(x).pow(2).sum()  # WRITE")
    assert not run_program(tmp_path, intended, "intended.py").diagnoses
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["result"], run_plain(tmp_path, intended, "i.py")["result"]))


def test_a_trained_leaf_in_a_dict_gets_no_rebinding(tmp_path):
    outcome = run_program(tmp_path, """
        import torch

        params = {"w": torch.nn.Parameter(torch.randn(3))}
        optimizer = torch.optim.SGD(params.values(), lr=0.1)
        shift = torch.nn.Parameter(torch.randn(3))
        optimizer.add_param_group({"params": [shift]})
        params["w"] += shift * 0.5  # WRITE
    """)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD102"
    assert not any(h.replacement and 'params["w"] = ' in h.replacement for h in diagnosis.help)
    assert not any(h.replacement and "params = params.clone()" in h.replacement for h in diagnosis.help)
