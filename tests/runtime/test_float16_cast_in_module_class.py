"""AD151 names the cast that made a trained submodule float16 when the class that builds it made the
cast: at the end of the submodule's assignment (`self.x = nn.Linear(...).to(torch.float16)`, set
19's AdaFace#127) or in a statement of the class (`self.visual_encoder.half()`, set 19's BLIVA#29).
Before, the report named `scaler.step(optimizer)` with advice: the traceback does not show the cast.
The help casts to float32 at that line; applied, the program trains as the hand-written version
without the cast does (float32 parameters, the same losses and parameters).

Two programs of the cause in other shapes, written before the change was run on them: a two-tower
recommender whose item tower is cast with `.to(dtype=torch.float16)` where it is assigned, and a
forecaster whose class casts its mixer with `.to(torch.half)` in a method the script calls."""

from __future__ import annotations

import torch

from helpers import apply_help, run_as_script, run_plain, run_program

RECOMMENDER_ITEM_TOWER_CAST_WHERE_ASSIGNED = """
    import torch
    from torch import nn
    import torch.nn.functional as F

    torch.manual_seed(0)


    class TwoTower(nn.Module):
        def __init__(self):
            super().__init__()
            self.user_tower = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 4))
            self.item_tower = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 4)).to(dtype=torch.float16)  # CAST

        def forward(self, users, items):
            item_dtype = next(self.item_tower.parameters()).dtype
            item_vectors = self.item_tower(items.to(item_dtype)).float()
            return (self.user_tower(users) * item_vectors).sum(dim=1)


    model = TwoTower()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cpu", init_scale=64.0)
    users, items = torch.randn(7, 5), torch.randn(7, 6)
    clicks = torch.randint(0, 2, (7,)).float()
    losses = []
    for step in range(3):
        optimizer.zero_grad()
        loss = F.binary_cross_entropy_with_logits(model(users, items), clicks)
        scaler.scale(loss).backward()
        scaler.step(optimizer)  # STEP
        scaler.update()
        losses.append(loss.detach())
    result = [torch.stack(losses), *[p.detach().clone() for p in model.parameters()]]
"""

RECOMMENDER_BY_HAND = RECOMMENDER_ITEM_TOWER_CAST_WHERE_ASSIGNED.replace(
    "nn.Linear(8, 4)).to(dtype=torch.float16)  # CAST", "nn.Linear(8, 4))")

FORECASTER_MIXER_CAST_IN_A_METHOD = """
    import torch
    from torch import nn

    torch.manual_seed(0)


    class Forecaster(nn.Module):
        def __init__(self, window=12, horizon=3):
            super().__init__()
            self.embed = nn.Linear(window, 16)
            self.temporal_mixer = nn.Sequential(nn.LayerNorm(16), nn.Linear(16, 16), nn.GELU())
            self.head = nn.Linear(16, horizon)

        def use_low_precision(self):
            self.temporal_mixer.to(torch.half)  # CAST

        def forward(self, history):
            hidden = self.embed(history)
            mixer_dtype = next(self.temporal_mixer.parameters()).dtype
            mixed = self.temporal_mixer(hidden.to(mixer_dtype)).float()
            return self.head(hidden + mixed)


    forecaster = Forecaster()
    forecaster.use_low_precision()
    optimizer = torch.optim.Adam(forecaster.parameters(), lr=1e-2)
    scaler = torch.amp.GradScaler("cpu")
    history, future = torch.randn(9, 12), torch.randn(9, 3)
    losses = []
    for step in range(3):
        optimizer.zero_grad()
        loss = (forecaster(history) - future).pow(2).mean()
        scaler.scale(loss).backward()
        scaler.step(optimizer)  # STEP
        scaler.update()
        losses.append(loss.detach())
    result = [torch.stack(losses), *[p.detach().clone() for p in forecaster.parameters()]]
"""

FORECASTER_BY_HAND = FORECASTER_MIXER_CAST_IN_A_METHOD.replace(
    "            self.temporal_mixer.to(torch.half)  # CAST", "            pass")


def _same(a, b) -> bool:
    return len(a) == len(b) and all(x.dtype == y.dtype and torch.allclose(x, y, atol=1e-6) for x, y in zip(a, b))


def test_the_cast_at_the_submodule_assignment_is_named(tmp_path):
    outcome = run_as_script(tmp_path, RECOMMENDER_ITEM_TOWER_CAST_WHERE_ASSIGNED)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD151"
    assert diagnosis.primary.line == outcome.line("CAST")
    assert "model.item_tower is cast to float16 here" in diagnosis.primary.note
    assert any(location.line == outcome.line("STEP") for location in diagnosis.related)
    assert "keep model.item_tower, which is trained, in float32" in diagnosis.help[0].message
    assert "to(dtype=torch.float32)" in diagnosis.help[0].replacement


def test_the_cast_at_the_assignment_changed_trains_as_written_by_hand(tmp_path):
    outcome = run_as_script(tmp_path, RECOMMENDER_ITEM_TOWER_CAST_WHERE_ASSIGNED)
    fixed = run_plain(tmp_path, apply_help(outcome))["result"]
    by_hand = run_plain(tmp_path, RECOMMENDER_BY_HAND, "by_hand.py")["result"]
    assert _same(fixed, by_hand)


def test_the_cast_in_a_method_of_the_class_is_named(tmp_path):
    outcome = run_as_script(tmp_path, FORECASTER_MIXER_CAST_IN_A_METHOD)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD151"
    assert diagnosis.primary.line == outcome.line("CAST")
    assert "forecaster.temporal_mixer is cast to float16 here" in diagnosis.primary.note
    assert diagnosis.help[0].replacement.strip() == "self.temporal_mixer.to(torch.float32)"


def test_the_cast_in_a_method_changed_trains_as_written_by_hand(tmp_path):
    outcome = run_as_script(tmp_path, FORECASTER_MIXER_CAST_IN_A_METHOD)
    fixed = run_plain(tmp_path, apply_help(outcome))["result"]
    by_hand = run_plain(tmp_path, FORECASTER_BY_HAND, "by_hand.py")["result"]
    assert _same(fixed, by_hand)


def test_a_frozen_submodule_in_float16_is_not_what_the_scaler_refuses(tmp_path):
    """A frozen float16 tower outside the optimizer: the scaler steps float32 parameters only."""
    frozen = RECOMMENDER_ITEM_TOWER_CAST_WHERE_ASSIGNED.replace(
        "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)",
        "model.item_tower.requires_grad_(False)\n    optimizer = torch.optim.SGD(model.user_tower.parameters(), lr=0.1)")
    outcome = run_program(tmp_path, frozen)
    assert outcome.error is None and not outcome.diagnoses
