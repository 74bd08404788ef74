"""Set J's ADL018 findings in OpenSpeech's unit tests (docs/lint.md, twelfth
check): a test runs two or three training loops in a row without
`zero_grad()`, each asserting only that the loss is a float.  The last loop
was already a smoke run (nothing after it); the earlier ones were reported
because the next loop reads the model.  A later loop that goes on stepping
the same optimizer is the same run continued, not a reader
(``adl018_no_zero_grad_in_loop._continued_runs``): what follows the last loop
decides.  Each claim is checked with torch."""

from __future__ import annotations

import textwrap

import pytest
import torch

from autograd_doctor.lint.engine import lint_source

HEADER = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    def test_forward(path=None):
        torch.manual_seed(0)
        model = nn.Linear(4, 2)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        x, y = torch.randn(8, 4), torch.randn(8, 2)
    """)

LOOP = textwrap.indent(textwrap.dedent("""\
    for i in range(3):
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        assert type(loss.item()) == float
    """), "    ")

# OpenSpeech's shape: three loops, then the test ends.
SMOKE = HEADER + LOOP + LOOP + LOOP

# The same loops, then the trained weights are saved: every step is seen.
SAVED = SMOKE + "    torch.save(model.state_dict(), path)\n    return model.weight.detach().clone()\n"

# An evaluation between the loops reads what the first loop trained.
EVALUATED = HEADER + LOOP + "    print(model(x).sum().item())\n" + LOOP

# A later loop that steps another optimizer does not continue this run.
OTHER_OPTIMIZER = HEADER + LOOP + textwrap.indent(textwrap.dedent("""\
    head = nn.Linear(2, 2)
    head_optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
    for i in range(3):
        head_optimizer.zero_grad()
        loss = nn.functional.mse_loss(head(model(x)), y)
        loss.backward()
        head_optimizer.step()
    """), "    ")


def _step_lines(source: str) -> list[int]:
    return [n for n, line in enumerate(source.splitlines(), 1) if line.strip() == "optimizer.step()"]


def _adl018_lines(source: str) -> list[int]:
    return sorted(f.line for f in lint_source(source) if f.code == "ADL018")


def test_loops_continued_by_the_same_run_are_a_smoke_run():
    assert _adl018_lines(SMOKE) == []


def test_loops_whose_result_is_saved_are_found():
    assert _adl018_lines(SAVED) == _step_lines(SAVED)


def test_loop_read_by_an_evaluation_before_the_next_is_found():
    assert _adl018_lines(EVALUATED) == _step_lines(EVALUATED)[:1]


def test_loop_followed_by_another_optimizers_training_is_found():
    assert _adl018_lines(OTHER_OPTIMIZER) == _step_lines(OTHER_OPTIMIZER)[:1]


def _run(source: str, clear: bool, tmp_path=None):
    if clear:  # the fixed version: each iteration clears first
        source = source.replace("        loss = nn.functional.mse_loss(model(x), y)",
                                "        optimizer.zero_grad()\n"
                                "        loss = nn.functional.mse_loss(model(x), y)")
    namespace: dict = {}
    exec(compile(source, "<fixture>", "exec"), namespace)
    return namespace["test_forward"](None if tmp_path is None else tmp_path / "model.pt")


def test_claims_hold_with_torch(tmp_path):
    # The smoke test passes whether or not it clears: its assertions only check types.
    _run(SMOKE, clear=False)
    _run(SMOKE, clear=True)
    # What the saving test keeps depends on the summed gradients.
    summed = _run(SAVED, clear=False, tmp_path=tmp_path)
    cleared = _run(SAVED, clear=True, tmp_path=tmp_path)
    assert not torch.equal(summed, cleared)


# Set J's recall: MolGAN's generator (re-created in r130) builds its MLP as a list
# in a loop, `layers.append(nn.Tanh())` then `layers.append(nn.Dropout(p,
# inplace=True))`, and chains it with `nn.Sequential(*layers)`.  Two appends in a
# row on the same paths are neighbours in the Sequential, like two arguments of a
# literal `nn.Sequential(...)` (``Checker.record_appended_neighbours``).
MLP = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class MLP(nn.Module):
        def __init__(self, dims, p):
            super().__init__()
            layers = []
            for c0, c1 in zip(dims[:-1], dims[1:]):
                layers.append(nn.Linear(c0, c1))
    {BLOCK}
            self.layers = nn.Sequential(*layers)

        def forward(self, x):
            return self.layers(x)
    """)

APPENDED = {
    # found: the dropout writes what Tanh kept
    "tanh then in-place dropout": ("layers.append(nn.Tanh())\n"
                                   "layers.append(nn.Dropout(p, inplace=True))", True),
    # a layer between them: the dropout writes the Linear's output, which nothing keeps
    "a layer between": ("layers.append(nn.Tanh())\n"
                        "layers.append(nn.Linear(c1, c1))\n"
                        "layers.append(nn.Dropout(p, inplace=True))", False),
    # the list grows by other means between them: the neighbour is unknown
    "extended between": ("layers.append(nn.Tanh())\n"
                         "layers.extend([nn.Linear(c1, c1)])\n"
                         "layers.append(nn.Dropout(p, inplace=True))", False),
    # appended only under a condition: not known to follow the Tanh, so no claim
    # (a miss where the condition holds; here it never does)
    "conditional": ("layers.append(nn.Tanh())\n"
                    "if c1 > 100:\n"
                    "    layers.append(nn.Dropout(p, inplace=True))", False),
    # an activation that keeps its input: the dropout may write its output
    "leaky relu": ("layers.append(nn.LeakyReLU(0.1))\n"
                   "layers.append(nn.Dropout(p, inplace=True))", False),
}


def _mlp(block: str) -> str:
    return MLP.replace("{BLOCK}", textwrap.indent(block, " " * 12))


def _adl001_lines(source: str) -> list[int]:
    return sorted(f.line for f in lint_source(source) if f.code == "ADL001")


def _backward(source: str) -> None:
    namespace: dict = {}
    exec(compile(source, "<fixture>", "exec"), namespace)
    torch.manual_seed(0)
    model = namespace["MLP"]([4, 8, 8], 0.5)
    model(torch.randn(3, 4)).sum().backward()


def test_appended_neighbours_are_compared():
    for case, (block, hazard) in APPENDED.items():
        source = _mlp(block)
        dropout_line = next(n for n, line in enumerate(source.splitlines(), 1) if "nn.Dropout" in line)
        assert _adl001_lines(source) == ([dropout_line] if hazard else []), case


def test_appended_neighbour_claims_hold_with_torch():
    for case, (block, hazard) in APPENDED.items():
        if hazard:
            with pytest.raises(RuntimeError, match="modified by an inplace operation"):
                _backward(_mlp(block))
        elif case != "conditional":  # never appended at these sizes: nothing to run
            _backward(_mlp(block))


# d2l-pytorch's RNN training (re-created in r131): `for s in state: s.detach()`
# drops the detached tensors, so `state` from `output, state = model(X, state)`
# carries the graph into the next minibatch; with `retain_graph=True` the next
# backward goes through it after the step changed the GRU's weights.  ADL003
# follows the one binding of `state` in the loop body into the next iteration
# (``adl003_step_before_backward_of_older_graph._carried``).
RNN_TRAINING = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.GRU(6, 8)
            self.head = nn.Linear(8, 6)

        def forward(self, x, state):
            y, state = self.rnn(x, state)
            return self.head(y), state


    def train(model, batches):
        optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
        state = torch.zeros(1, 2, 8)
        for x, y in batches:
    {CUT}
            output, state = model(x, state)
            loss = nn.functional.mse_loss(output, y)
            optimizer.zero_grad()
            loss.backward({RETAIN})
            optimizer.step()
        return loss.item()
    """)

CARRIED = {
    # found: the graph carried into the next iteration saved the old weights
    "dropped detach, retained graph": ("for s in state:\n    s.detach()", "retain_graph=True", True),
    # the state is cut: each iteration's graph is its own
    "detached state": ("state = state.detach()", "retain_graph=True", False),
    "detached in place": ("state.detach_()", "retain_graph=True", False),
    # the first backward frees the carried graph: the second fails on that
    # ("a second time"), not on the step, which is not ADL003's claim
    "freed graph": ("for s in state:\n    s.detach()", "", False),
}


def _rnn(cut: str, retain: str) -> str:
    return RNN_TRAINING.replace("{CUT}", textwrap.indent(cut, " " * 8)).replace("{RETAIN}", retain)


def _train_rnn(source: str):
    namespace: dict = {}
    exec(compile(source, "<fixture>", "exec"), namespace)
    torch.manual_seed(0)
    batches = [(torch.randn(5, 2, 6), torch.randn(5, 2, 6)) for _ in range(3)]
    return namespace["train"](namespace["LM"](), batches)


def test_state_carried_into_the_next_iteration():
    for case, (cut, retain, hazard) in CARRIED.items():
        source = _rnn(cut, retain)
        step_line = next(n for n, line in enumerate(source.splitlines(), 1) if "optimizer.step()" in line)
        lines = sorted(f.line for f in lint_source(source) if f.code == "ADL003")
        assert lines == ([step_line] if hazard else []), case


def test_carried_state_claims_hold_with_torch():
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _train_rnn(_rnn(*CARRIED["dropped detach, retained graph"][:2]))
    assert isinstance(_train_rnn(_rnn(*CARRIED["detached state"][:2])), float)
    assert isinstance(_train_rnn(_rnn(*CARRIED["detached in place"][:2])), float)
    with pytest.raises(RuntimeError, match="second time"):
        _train_rnn(_rnn(*CARRIED["freed graph"][:2]))
