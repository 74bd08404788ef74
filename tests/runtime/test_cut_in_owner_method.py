"""AD301 for a submodule whose output a method of the module that owns it detaches (set 18's
A-GCN: the learned adjacency built from `self.phi(x) @ self.theta(x).t()` and `.detach()`ed):
the submodule runs, its parameters get no gradient, and the optimizer that trains the rest holds
them. The detach is named and removing it gives the hand-written version's values. A target
network or a teacher detached inside the model on purpose, in no optimizer, is silent."""

import pytest
import torch

from helpers import apply_help, run_plain, run_program

PROGRAM = """
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)


class AdaptiveGraph(nn.Module):
    def __init__(self):
        super().__init__()
        self.phi = nn.Linear(6, 4)
        self.theta = nn.Linear(6, 4)
        self.conv = nn.Linear(6, 3)

    def adjacency(self, x):
        affinity = self.phi(x) @ self.theta(x).t()
        return torch.softmax(affinity, dim=-1)DETACH  # CUT

    def forward(self, x):
        return self.adjacency(x) @ self.conv(x)


x, y = torch.randn(10, 6), torch.randint(0, 3, (10,))
model = AdaptiveGraph()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
losses = []
for step in range(4):
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
"""


def test_a_learned_adjacency_detached_in_the_models_method_is_named_and_the_detach_removed(tmp_path):
    outcome = run_program(tmp_path, PROGRAM.replace("DETACH", ".detach()"))
    assert outcome.error is None
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD301"]
    assert diagnosis.primary.line == outcome.line("CUT")
    assert "model.phi.weight" in diagnosis.title
    assert diagnosis.help[0].replacement.strip() == "return torch.softmax(affinity, dim=-1)"
    fixed = run_plain(tmp_path, apply_help(outcome))["result"]
    reference = run_plain(tmp_path, PROGRAM.replace("DETACH", ""), "reference.py")["result"]
    assert torch.equal(fixed["losses"], reference["losses"])
    assert all(torch.equal(a, b) for a, b in zip(fixed["params"], reference["params"]))


def test_the_adjacency_kept_in_the_graph_is_silent(tmp_path):
    outcome = run_program(tmp_path, PROGRAM.replace("DETACH", ""))
    assert [d.code for d in outcome.diagnoses] == []


def test_a_target_network_detached_inside_the_model_and_in_no_optimizer_is_silent(tmp_path):
    outcome = run_program(tmp_path, """
        import copy
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        torch.manual_seed(0)


        class Bootstrap(nn.Module):
            def __init__(self):
                super().__init__()
                self.online = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 4))
                self.predictor = nn.Linear(4, 4)
                self.target = copy.deepcopy(self.online)

            def forward(self, a, b):
                target = self.target(b).detach()
                return F.mse_loss(self.predictor(self.online(a)), target)


        model = Bootstrap()
        optimizer = torch.optim.SGD(list(model.online.parameters()) + list(model.predictor.parameters()), lr=0.1)
        for step in range(4):
            loss = model(torch.randn(8, 6), torch.randn(8, 6))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            with torch.no_grad():
                for t, o in zip(model.target.parameters(), model.online.parameters()):
                    t.mul_(0.9).add_(0.1 * o)
        """)
    assert outcome.error is None
    assert [d.code for d in outcome.diagnoses] == []


# A model that uses a part as a fixed feature extractor and detaches that part's output as it is
# (the held-out variant `tests/errors/variants/correct/embedding_output_frozen_with_flag.py`, the
# fix AD115's help writes, drew AD301 in every mode). Nothing shows the program meant to train
# the part: the optimizer holds it only because it takes the whole model's parameters.
FROZEN_BACKBONE = """
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)


class LinearProbe(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(6, 8)
        self.classifier = nn.Linear(8, 3)

    def forward(self, x):
        FREEZE
        return self.classifier(F.relu(features))


x, y = torch.randn(10, 6), torch.randint(0, 3, (10,))
model = LinearProbe()
FROZEN_PARAMETERS
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
losses = []
for step in range(4):
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
"""

MODES = {"default": {}, "full": {"mode": "full"}, "strict": {"strict": True}}


FREEZES = {"inline": "features = self.backbone(x).detach()",
           "rebound": "features = self.backbone(x)\n        features = features.detach()"}


@pytest.mark.parametrize("freeze", sorted(FREEZES))
@pytest.mark.parametrize("mode", sorted(MODES))
def test_a_part_frozen_by_detaching_its_own_output_is_silent_in_every_mode(tmp_path, mode, freeze):
    program = FROZEN_BACKBONE.replace("FREEZE", FREEZES[freeze]).replace("FROZEN_PARAMETERS", "")
    outcome = run_program(tmp_path, program, **MODES[mode])
    assert outcome.error is None
    assert outcome.diagnoses == []
    assert outcome.warnings == []
    plain = run_plain(tmp_path, program, "plain.py")["result"]
    assert torch.equal(outcome.namespace["result"]["losses"], plain["losses"])
    # what the program means: the backbone's parameters frozen by hand
    reference = run_plain(tmp_path, FROZEN_BACKBONE.replace("FREEZE", "features = self.backbone(x)").replace(
        "FROZEN_PARAMETERS", "model.backbone.requires_grad_(False)"), "reference.py")["result"]
    assert torch.equal(plain["losses"], reference["losses"])
    assert all(torch.equal(a, b) for a, b in zip(plain["params"], reference["params"]))
