"""The per-step checks at optimizer.step() that read their trigger first and skip the walk of the
optimizer's parameters when it is absent (README, "Steady-state cost, worked on (stop 44)"): AD212
reads the clip log (a clip since the last step that a backward() added to), AD216 the log of
`module.requires_grad = <bool>` assignments. Where the trigger, or the optimizer's parameter
groups, first appear at a late step, the diagnosis must still come at that very step, and the
correct twin of each program must stay silent."""

import warnings

import torch
import torch.nn.functional as F

import autograd_doctor


def _steps_with(code: str, run_step, steps: int) -> list[int]:
    """The indices of the steps after which the doctor had reported `code` for the first time."""
    found = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with autograd_doctor.watch() as doctor:
            seen = 0
            for index in range(steps):
                run_step(index)
                count = sum(1 for d in doctor.diagnoses if d.code == code)
                if count > seen:
                    found.append(index)
                    seen = count
    return found


def _accumulating_step(model, optimizer, accumulate_from: int, clip_inside: bool):
    x, y = torch.randn(8, 6), torch.randint(0, 3, (8,))

    def run_step(index):
        parts = 2 if index >= accumulate_from else 1
        for part in range(parts):
            loss = F.cross_entropy(model(x[4 * part: 4 * part + 4]), y[4 * part: 4 * part + 4]) / parts
            loss.backward()
            if clip_inside:
                torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
        if not clip_inside:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
        optimizer.step()
        optimizer.zero_grad()
    return run_step


def test_a_clip_inside_an_accumulation_that_starts_at_step_5_is_reported_at_step_5():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    assert _steps_with("AD212", _accumulating_step(model, optimizer, 5, clip_inside=True), 8) == [5]


def test_the_clip_after_the_accumulation_stays_silent():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    assert _steps_with("AD212", _accumulating_step(model, optimizer, 2, clip_inside=False), 6) == []


def test_a_param_group_added_at_step_5_makes_the_clipped_accumulation_its_own_at_step_5():
    # The optimizer holds only the head's parameters until step 5; the clip inside the accumulation
    # (from step 0) clips the body's: only once the body's group is added does the step apply them.
    torch.manual_seed(0)
    body, head = torch.nn.Linear(6, 8), torch.nn.Linear(8, 3)
    optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
    x, y = torch.randn(8, 6), torch.randint(0, 3, (8,))

    def run_step(index):
        if index == 5:
            optimizer.add_param_group({"params": list(body.parameters())})
        for part in range(2):
            loss = F.cross_entropy(head(torch.relu(body(x[4 * part: 4 * part + 4]))), y[4 * part: 4 * part + 4])
            loss.backward()
            torch.nn.utils.clip_grad_norm_(body.parameters(), 0.1)
        optimizer.step()
        optimizer.zero_grad()
        body.zero_grad()
    assert _steps_with("AD212", run_step, 8) == [5]


class _Detector(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU())
        self.box_head = torch.nn.Linear(8, 4)

    def forward(self, images):
        return self.box_head(self.backbone(images))


def _freezing_step(model, optimizer, freeze):
    images, boxes = torch.randn(5, 6), torch.randn(5, 4)

    def run_step(index):
        if index == 7:
            freeze(model)
        loss = ((model(images) - boxes) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return run_step


def _freeze_by_attribute(model):
    model.backbone.requires_grad = False


def _freeze_by_method(model):
    model.backbone.requires_grad_(False)


def test_a_module_flag_assigned_at_step_7_is_reported_at_step_7():
    torch.manual_seed(0)
    model = _Detector()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    assert _steps_with("AD216", _freezing_step(model, optimizer, _freeze_by_attribute), 10) == [7]


def test_the_method_that_freezes_stays_silent():
    torch.manual_seed(0)
    model = _Detector()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    assert _steps_with("AD216", _freezing_step(model, optimizer, _freeze_by_method), 10) == []
