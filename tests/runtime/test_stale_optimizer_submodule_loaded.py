"""AD207's first help for a submodule replaced by one of the same class, settings and layout after
the optimizer was built (`self.net = Net(...)` to "reset" a network): load the new submodule's
values into the one the optimizer trains (`self.net.load_state_dict(Net(...).state_dict())`),
which keeps the optimizer, its settings and its state, as resetting the parameters in place does
(the accepted fix of QueuQ/CGLB#5). A replacement of another layout keeps the rebuild help first;
a reset in place is not reported."""

from __future__ import annotations

import textwrap

import torch

from helpers import apply_help, run_plain, run_program

# A joint-training baseline resets its network for each task by building a new one; the network
# was put in eval mode for the evaluation before (the help puts the old one back in train mode).
RESET_BY_REBUILDING = """
    import torch
    import torch.nn as nn

    torch.manual_seed(0)


    class Net(nn.Module):
        def __init__(self, width):
            super().__init__()
            self.body = nn.Linear(4, width)
            self.head = nn.Linear(width, 2)

        def forward(self, x):
            return self.head(torch.tanh(self.body(x)))


    class Learner(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = Net(8)

        def reset(self):
            self.net = Net(8)  # REPLACED

        def observe(self, x, y, opt):
            self.net.train()
            loss = nn.functional.cross_entropy(self.net(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss.detach()


    learner = Learner()
    opt = torch.optim.Adam(learner.parameters(), lr=0.05)
    x, y = torch.randn(10, 4), torch.randint(0, 2, (10,))
    losses = []
    for task in range(2):
        if task:
            learner.reset()
        for _ in range(4):
            losses.append(learner.observe(x, y, opt))
        learner.net.eval()
    result = losses + [p.detach().clone() for p in learner.net.parameters()]
"""

RESET_IN_PLACE = RESET_BY_REBUILDING.replace(
    "self.net = Net(8)  # REPLACED",
    "for module in self.net.modules():\n"
    "                if isinstance(module, nn.Linear):\n"
    "                    module.reset_parameters()")


def _equal(a, b) -> bool:
    return len(a) == len(b) and all(torch.equal(x, y) for x, y in zip(a, b))


def test_the_replacement_is_named_and_the_load_help_keeps_the_optimizer(tmp_path):
    outcome = run_program(tmp_path, RESET_BY_REBUILDING)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD207"]
    assert diagnosis.primary.line == outcome.line("REPLACED")
    assert diagnosis.help[0].replacement == ("self.net.load_state_dict(Net(8).state_dict())\n"
                                             "self.net.train()")
    assert "build the optimizer again" in diagnosis.help[1].message
    fixed = run_plain(tmp_path, apply_help(outcome))
    correct = run_plain(tmp_path, textwrap.dedent(RESET_IN_PLACE), name="correct.py")
    assert _equal(fixed["result"], correct["result"])
    assert not _equal(outcome.namespace["result"], correct["result"])  # what it is about


def test_a_reset_in_place_is_not_reported(tmp_path):
    outcome = run_program(tmp_path, RESET_IN_PLACE)
    assert outcome.error is None
    assert not [d for d in outcome.diagnoses if d.code == "AD207"], [str(d) for d in outcome.diagnoses]


def test_a_head_of_the_same_layout_replaced_at_top_level(tmp_path):
    """Another shape: a layer of an nn.Sequential's owner replaced at module level, still in train
    mode: the load alone, no mode call."""
    source = """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        model = nn.Module()
        model.body = nn.Linear(3, 4)
        model.fc = nn.Linear(4, 2)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        model.fc = nn.Linear(4, 2)  # REPLACED
        x = torch.randn(6, 3)
        for _ in range(3):
            optimizer.zero_grad()
            model.fc(torch.relu(model.body(x))).pow(2).mean().backward()
            optimizer.step()
        result = [p.detach().clone() for p in model.parameters()]
    """
    outcome = run_program(tmp_path, source)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD207"]
    assert diagnosis.primary.line == outcome.line("REPLACED")
    assert diagnosis.help[0].replacement == "model.fc.load_state_dict(nn.Linear(4, 2).state_dict())"
    fixed = run_plain(tmp_path, apply_help(outcome))
    in_place = textwrap.dedent(source).replace("model.fc = nn.Linear(4, 2)  # REPLACED", "model.fc.reset_parameters()")
    assert _equal(fixed["result"], run_plain(tmp_path, in_place, name="correct.py")["result"])


def test_a_replacement_of_another_layout_keeps_the_rebuild_help_first(tmp_path):
    outcome = run_program(tmp_path, RESET_BY_REBUILDING.replace("self.net = Net(8)  # REPLACED",
                                                                "self.net = Net(16)  # REPLACED"))
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD207"]
    assert not any("load_state_dict" in (h.replacement or "") for h in diagnosis.help)
    assert "build the optimizer again" in diagnosis.help[0].message


def test_other_settings_are_not_loaded(tmp_path):
    """The same parameter shapes but another setting (a dropout rate): loading the state dict would
    not reproduce the new submodule, so no load help."""
    outcome = run_program(tmp_path, """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        model = nn.Module()
        model.block = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.1))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        model.block = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5))  # REPLACED
        for _ in range(2):
            optimizer.zero_grad()
            model.block(torch.randn(4, 3)).pow(2).mean().backward()
            optimizer.step()
    """)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD207"]
    assert not any("load_state_dict" in (h.replacement or "") for h in diagnosis.help)
