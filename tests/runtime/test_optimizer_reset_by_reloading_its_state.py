"""AD207 when the program "resets" its optimizer after replacing parameters by loading back a state
dict saved before training (set 16's SPIB: `model.reset_representative(...)` builds a new
VampPrior layer, then `optimizer.load_state_dict(initial_state)`). A state dict names parameters by
their position, not by the tensors: the optimizer keeps the old tensors, and the new ones get
gradients that no step applies. The line the accepted fix changes is the reload (the optimizer
built again there), not the replacement inside the helper. Two programs of the same cause in other
shapes (written before the change): a class-incremental trainer that widens its classifier and
reloads `self.fresh_state` in a method, and a function that grows a regression network in stages
and reloads a state taken right after the construction. The help builds the optimizer again at the
reload; applied, it gives the hand-written version's parameters."""

from __future__ import annotations

import torch

from helpers import apply_help, run_plain, run_program

INCREMENTAL = """
    import copy

    import torch
    from torch import nn
    import torch.nn.functional as F

    torch.manual_seed(3)


    class Classifier(nn.Module):
        def __init__(self, classes):
            super().__init__()
            self.features = nn.Sequential(nn.Linear(6, 12), nn.ReLU())
            self.head = nn.Linear(12, classes)

        def add_classes(self, extra):
            old = self.head
            self.head = nn.Linear(12, old.out_features + extra)  # REPLACED
            with torch.no_grad():
                self.head.weight[: old.out_features] = old.weight
                self.head.bias[: old.out_features] = old.bias

        def forward(self, x):
            return self.head(self.features(x))


    class Trainer:
        def __init__(self, model):
            self.model = model
            self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1, momentum=0.9)
            self.fresh_state = copy.deepcopy(self.optimizer.state_dict())

        def train_task(self, x, y, steps):
            for _ in range(steps):
                loss = F.cross_entropy(self.model(x), y)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()  # STEP

        def next_task(self, extra):
            self.model.add_classes(extra)  # CALL
            self.optimizer.load_state_dict(self.fresh_state)  # RELOAD


    trainer = Trainer(Classifier(2))
    for task in range(3):
        x = torch.randn(16, 6)
        y = torch.randint(0, 2 + 2 * task, (16,))
        trainer.train_task(x, y, 3)
        if task < 2:
            trainer.next_task(2)
    learned = [p.detach().clone() for p in trainer.model.parameters()]
"""

INCREMENTAL_REFERENCE = INCREMENTAL.replace(
    "self.optimizer.load_state_dict(self.fresh_state)  # RELOAD",
    "self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1, momentum=0.9)")

GROWING = """
    import torch
    from torch import nn

    torch.manual_seed(5)


    class GrowingRegressor(nn.Module):
        def __init__(self):
            super().__init__()
            self.width = 4
            self.hidden = nn.Linear(1, self.width)
            self.out = nn.Linear(self.width, 1)

        def grow(self):
            self.width *= 2
            self.hidden = nn.Linear(1, self.width)  # REPLACED
            self.out = nn.Linear(self.width, 1)

        def forward(self, t):
            return self.out(torch.tanh(self.hidden(t)))


    def fit(net, t, target, stages, steps):
        opt = torch.optim.Adam(net.parameters(), lr=2e-2)
        start = opt.state_dict()
        history = []
        for stage in range(stages):
            for _ in range(steps):
                opt.zero_grad()
                loss = ((net(t) - target) ** 2).mean()
                loss.backward()
                opt.step()  # STEP
                history.append(loss.detach())
            net.grow()  # CALL
            opt.load_state_dict(start)  # RELOAD
        return history


    t = torch.linspace(-2, 2, 40).unsqueeze(1)
    net = GrowingRegressor()
    losses = torch.stack(fit(net, t, torch.sin(3 * t), 3, 4))
    learned = [p.detach().clone() for p in net.parameters()]
"""

GROWING_REFERENCE = GROWING.replace("opt.load_state_dict(start)  # RELOAD",
                                    "opt = torch.optim.Adam(net.parameters(), lr=2e-2)")

# A state saved after training started (a checkpoint with moments): loading it back is not a fresh
# optimizer, so building one there would change what the program means: advice, no code.
GROWING_FROM_CHECKPOINT = GROWING.replace(
    "            net.grow()  # CALL\n", "            start = opt.state_dict()\n            net.grow()  # CALL\n")


def test_the_reload_in_a_method_is_named_and_rebuilt(tmp_path):
    outcome = run_program(tmp_path, INCREMENTAL)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD207"]
    assert diagnosis.primary.line == outcome.line("RELOAD")
    related = [location.line for location in diagnosis.related]
    assert outcome.line("REPLACED") in related and outcome.line("CALL") in related
    assert outcome.line("STEP") in related
    assert "by their position" in diagnosis.primary.note
    first = diagnosis.help[0]
    assert first.location.line == outcome.line("RELOAD")
    assert first.replacement == "self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1, momentum=0.9)"


def test_the_rebuilt_optimizer_gives_the_incremental_reference(tmp_path):
    outcome = run_program(tmp_path, INCREMENTAL)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD207"]
    outcome.diagnoses = [diagnosis]
    fixed = run_plain(tmp_path, apply_help(outcome))
    reference = run_plain(tmp_path, INCREMENTAL_REFERENCE, name="reference.py")
    buggy = run_plain(tmp_path, INCREMENTAL, name="buggy.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["learned"], reference["learned"]))
    assert not all(a.shape == b.shape and torch.equal(a, b) for a, b in zip(buggy["learned"], reference["learned"]))


def test_the_reload_in_a_function_is_named_and_rebuilt(tmp_path):
    outcome = run_program(tmp_path, GROWING)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD207"]
    assert diagnosis.primary.line == outcome.line("RELOAD")
    assert diagnosis.help[0].replacement == "opt = torch.optim.Adam(net.parameters(), lr=2e-2)"
    outcome.diagnoses = [diagnosis]
    fixed = run_plain(tmp_path, apply_help(outcome))
    reference = run_plain(tmp_path, GROWING_REFERENCE, name="reference.py")
    assert torch.equal(fixed["losses"], reference["losses"])
    assert all(torch.equal(a, b) for a, b in zip(fixed["learned"], reference["learned"]))


def test_a_state_saved_after_training_started_gets_no_rebuild_at_the_reload(tmp_path):
    outcome = run_program(tmp_path, GROWING_FROM_CHECKPOINT)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD207"]
    assert diagnosis.primary.line == outcome.line("RELOAD")
    assert all(s.location is None or s.location.line != outcome.line("RELOAD") or not s.replacement
               for s in diagnosis.help)


def test_the_rebuilt_versions_are_silent(tmp_path):
    for index, source in enumerate((INCREMENTAL_REFERENCE, GROWING_REFERENCE)):
        folder = tmp_path / str(index)
        folder.mkdir()
        outcome = run_program(folder, source)
        assert outcome.error is None
        assert not outcome.diagnoses
