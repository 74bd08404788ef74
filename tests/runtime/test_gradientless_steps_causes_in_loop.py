"""AD214 (an optimizer keeps stepping and none of its parameters ever gets a gradient) names the
statement of the training loop that caused it, with a change that makes the program mean what it
was written for (set 16's cross-model prompt projector and diffusion-policy optimizer):

- a value computed from the optimizer's parameters, assigned through `.data` into a module's
  parameter: the help makes the value itself the module's attribute, so backward() goes on into it;
- the optimizer built from another model's parameters than the one the loop calls: the help
  builds it from the model the loop trains.
"""

from __future__ import annotations

import torch

from helpers import apply_help, run_plain, run_program

HYPERNETWORK_THROUGH_DATA = """
    import torch
    from torch import nn
    import torch.nn.functional as F

    torch.manual_seed(0)
    hypernet = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 4 * 8))
    target = nn.Linear(8, 4, bias=False)
    optimizer = torch.optim.Adam(hypernet.parameters(), lr=1e-2)
    task, x, y = torch.randn(3), torch.randn(10, 8), torch.randn(10, 4)


    def train(steps):
        losses = []
        for step in range(steps):
            generated = hypernet(task).view(4, 8)
            target.weight.data = generated  # CUT
            loss = F.mse_loss(target(x), y)
            loss.backward()
            optimizer.step()  # STEP
            optimizer.zero_grad()
            losses.append(loss.detach())
        return losses


    losses = train(3)
    result = [torch.stack(losses), *[p.detach().clone() for p in hypernet.parameters()]]
"""

# The hand-written version: the generated weight is used as the layer's weight.
HYPERNETWORK_INTENDED = HYPERNETWORK_THROUGH_DATA.replace(
    "            target.weight.data = generated  # CUT\n", "").replace(
    "loss = F.mse_loss(target(x), y)", "loss = F.mse_loss(F.linear(x, generated), y)")

EMA_COPY_THROUGH_DATA = """
    import torch
    from torch import nn

    torch.manual_seed(0)
    model, ema = nn.Linear(4, 2), nn.Linear(4, 2)
    frozen_copy = [p.detach().clone().requires_grad_() for p in model.parameters()]
    optimizer = torch.optim.SGD(frozen_copy, lr=0.1)
    x, y = torch.randn(8, 4), torch.randn(8, 2)
    for step in range(3):
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        averaged = 0.9 * ema.weight + 0.1 * model.weight.detach()
        ema.weight.data = averaged
        optimizer.step()
        optimizer.zero_grad()
"""

OPTIMIZER_ON_OTHER_MODEL = """
    import torch
    from torch import nn
    import torch.nn.functional as F

    torch.manual_seed(0)
    pretrained_encoder = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
    finetuned_encoder = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
    optimizer = torch.optim.SGD(pretrained_encoder.parameters(), lr=0.1, momentum=0.9)  # BUILT
    x, labels = torch.randn(12, 6), torch.randint(0, 3, (12,))
    for step in range(3):
        loss = F.cross_entropy(finetuned_encoder(x), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()  # STEP
    result = [p.detach().clone() for p in [*finetuned_encoder.parameters(), *pretrained_encoder.parameters()]]
"""

OPTIMIZER_INTENDED = OPTIMIZER_ON_OTHER_MODEL.replace(
    "torch.optim.SGD(pretrained_encoder.parameters()", "torch.optim.SGD(finetuned_encoder.parameters()")

# The loop calls the optimizer's own model, through detached inputs of its head only: its missing
# gradients have another cause than the choice of model, and the help must not swap models.
OPTIMIZER_MODEL_USED_BUT_CUT = """
    import torch
    from torch import nn

    torch.manual_seed(0)
    backbone, head = nn.Linear(6, 4), nn.Linear(4, 1)
    optimizer = torch.optim.SGD(backbone.parameters(), lr=0.1)
    x, y = torch.randn(8, 6), torch.randn(8, 1)
    for step in range(3):
        features = backbone(x).detach()
        loss = ((head(features) - y) ** 2).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
"""


def test_a_computed_value_assigned_through_data_is_named_with_a_change(tmp_path):
    outcome = run_program(tmp_path, HYPERNETWORK_THROUGH_DATA)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD214"]
    assert diagnosis.primary.line == outcome.line("CUT")
    assert outcome.line("STEP") in [location.line for location in diagnosis.related]
    assert diagnosis.help[0].replacement == "del target.weight\ntarget.weight = generated"
    assert "state_dict" in diagnosis.help[0].message
    assert any("generated was computed from" in note for note in diagnosis.notes)


def test_the_data_help_applied_trains_the_hypernetwork_as_intended(tmp_path):
    outcome = run_program(tmp_path, HYPERNETWORK_THROUGH_DATA)
    outcome.diagnoses = [d for d in outcome.diagnoses if d.code == "AD214"]
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    intended = run_plain(tmp_path, HYPERNETWORK_INTENDED, "intended.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["result"], intended["result"]))
    original = run_plain(tmp_path, HYPERNETWORK_THROUGH_DATA, "original.py")
    assert not torch.equal(original["result"][1], fixed["result"][1])  # the hypernetwork trains now


def test_a_data_copy_of_values_without_the_optimizers_graph_is_not_the_cause(tmp_path):
    outcome = run_program(tmp_path, EMA_COPY_THROUGH_DATA)
    found = [d for d in outcome.diagnoses if d.code == "AD214"]
    assert found and all(d.primary.role != "cut" for d in found)
    assert not any(s.replacement and "del " in s.replacement for d in found for s in d.help)


def test_an_optimizer_built_on_a_model_the_loop_never_uses_is_named_at_its_construction(tmp_path):
    outcome = run_program(tmp_path, OPTIMIZER_ON_OTHER_MODEL)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD214"]
    assert diagnosis.primary.line == outcome.line("BUILT")
    assert diagnosis.help[0].replacement == \
        "optimizer = torch.optim.SGD(finetuned_encoder.parameters(), lr=0.1, momentum=0.9)  # BUILT"[:-len("  # BUILT")]
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    intended = run_plain(tmp_path, OPTIMIZER_INTENDED, "intended.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["result"], intended["result"]))


def test_a_model_the_loop_uses_is_not_swapped_for_another(tmp_path):
    outcome = run_program(tmp_path, OPTIMIZER_MODEL_USED_BUT_CUT)
    assert [d.code for d in outcome.diagnoses] == ["AD211"]  # the detach() is the cause, named as such
    assert outcome.diagnosis.primary.role == "cut"
    assert not any(s.replacement and "head.parameters()" in s.replacement for s in outcome.diagnosis.help)
