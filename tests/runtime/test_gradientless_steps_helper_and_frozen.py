"""AD214 (an optimizer keeps stepping and none of its parameters gets a gradient) where the
optimizer also holds frozen parameters (a LoRA/DoRA fine-tune builds it over `model.parameters()`
after freezing the pretrained layers) and where the training loop is a helper's,
`train(model, optimizer)`, called with an optimizer built at the top level over another model's
parameters (set 24's dora-from-scratch#1): the construction is named and the help builds it over
the model the helper's loop trains, by its global name.
"""

from __future__ import annotations

import torch

from helpers import apply_help, run_plain, run_program

HELPER_TRAINS_OTHER_MODEL = """
    import copy
    import torch
    from torch import nn
    import torch.nn.functional as F

    torch.manual_seed(0)


    class Adapter(nn.Module):
        def __init__(self, linear):
            super().__init__()
            self.linear = linear
            self.down = nn.Parameter(torch.randn(linear.in_features, 2) * 0.5)
            self.up = nn.Parameter(torch.zeros(2, linear.out_features))

        def forward(self, x):
            return self.linear(x) + x @ self.down @ self.up


    def train(model, optimizer, batches, losses):
        for x, y in batches:
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()  # STEP
            losses.append(loss.item())


    base = nn.Linear(6, 3)
    batches = [(torch.randn(8, 6), torch.randint(0, 3, (8,))) for _ in range(3)]
    first, second = Adapter(copy.deepcopy(base)), Adapter(copy.deepcopy(base))
    for model in (first, second):
        model.linear.requires_grad_(False)
    first_optimizer = torch.optim.Adam(first.parameters(), lr=0.05)
    first_losses = []
    train(first, first_optimizer, batches, first_losses)
    second_optimizer = torch.optim.Adam(first.parameters(), lr=0.05)  # BUILT
    second_losses = []
    train(second, second_optimizer, batches, second_losses)
    result = [torch.tensor(second_losses), *[p.detach().clone() for p in (*first.parameters(), *second.parameters())]]
"""

HELPER_INTENDED = HELPER_TRAINS_OTHER_MODEL.replace(
    "second_optimizer = torch.optim.Adam(first.parameters(), lr=0.05)  # BUILT",
    "second_optimizer = torch.optim.Adam(second.parameters(), lr=0.05)  # BUILT")

# Another shape: a model wrapped with frozen layers, the loop inline, the optimizer built over the
# wrapped model's original (unwrapped) copy.
INLINE_FROZEN_OTHER_MODEL = """
    import torch
    from torch import nn

    torch.manual_seed(1)
    teacher = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    student = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    teacher[0].requires_grad_(False)
    student[0].requires_grad_(False)
    optimizer = torch.optim.SGD(teacher.parameters(), lr=0.1)  # BUILT
    x, y = torch.randn(16, 4), torch.randn(16, 1)
    for step in range(3):
        loss = ((student(x) - y) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    result = [p.detach().clone() for p in (*student.parameters(), *teacher.parameters())]
"""

INLINE_INTENDED = INLINE_FROZEN_OTHER_MODEL.replace("torch.optim.SGD(teacher.parameters()",
                                                    "torch.optim.SGD(student.parameters()")


def test_the_helpers_optimizer_built_over_another_model_is_named_with_its_global_name(tmp_path):
    outcome = run_program(tmp_path, HELPER_TRAINS_OTHER_MODEL)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD214"]
    assert diagnosis.primary.line == outcome.line("BUILT")
    assert outcome.line("STEP") in [location.line for location in diagnosis.related]
    assert diagnosis.help[0].replacement == "second_optimizer = torch.optim.Adam(second.parameters(), lr=0.05)"
    assert any("it calls model (second here)" in note for note in diagnosis.notes)
    assert any("frozen" in location.note for location in diagnosis.related)


def test_the_helpers_help_applied_trains_the_model_as_intended(tmp_path):
    outcome = run_program(tmp_path, HELPER_TRAINS_OTHER_MODEL)
    outcome.diagnoses = [d for d in outcome.diagnoses if d.code == "AD214"]
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    intended = run_plain(tmp_path, HELPER_INTENDED, "intended.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["result"], intended["result"]))


def test_the_intended_helper_program_is_silent(tmp_path):
    outcome = run_program(tmp_path, HELPER_INTENDED)
    assert outcome.diagnoses == []


def test_frozen_layers_in_the_optimizer_do_not_hide_an_optimizer_built_over_another_model(tmp_path):
    outcome = run_program(tmp_path, INLINE_FROZEN_OTHER_MODEL)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD214"]
    assert diagnosis.primary.line == outcome.line("BUILT")
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    intended = run_plain(tmp_path, INLINE_INTENDED, "intended.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["result"], intended["result"]))
    assert run_program(tmp_path, INLINE_INTENDED, "intended_watched.py").diagnoses == []
