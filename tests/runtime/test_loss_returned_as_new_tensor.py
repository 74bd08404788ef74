"""AD301 where the loss comes from a function of the user's whose argument leaves torch
(`.numpy()`, `.tolist()`) and whose `return` makes a new tensor of what was computed outside
(held-out set 21: point-cloud-utils#78, a Chamfer distance computed in NumPy and returned as
`torch.tensor(...)`). The cut is not on the loss's line: that `return` is the primary location
(where the result is made without a graph), the call and the line where the values left torch are
said, and the help is advice (the values are NumPy arrays or numbers there: no tensor can replace
the copy). Confirmed on two programs of another shape (a ranking loss through `.tolist()` and
`torch.as_tensor`, a radius penalty given by keyword through `np.linalg.norm` and
`torch.from_numpy`); the advised torch computation keeps the loss's value and trains; correct
versions stay silent."""

import torch

from helpers import marked_line, run_plain, run_program

RANKING = """
import torch
torch.manual_seed(0)
scorer = torch.nn.Linear(3, 1)
opt = torch.optim.SGD(scorer.parameters(), lr=0.1)
items = torch.randn(5, 3)


def hinge_rank_loss(scores, order):
    values = scores.detach().squeeze(1).tolist()
    pairs = [max(0.0, 1.0 - (values[i] - values[j])) for i, j in order]
    return torch.as_tensor(sum(pairs) / len(pairs))  # RETURN


order = [(0, 1), (1, 2), (3, 4)]
scores = scorer(items)
loss = hinge_rank_loss(scores, order)
loss.backward()
"""
RANKING_TORCH = """
import torch
torch.manual_seed(0)
scorer = torch.nn.Linear(3, 1)
opt = torch.optim.SGD(scorer.parameters(), lr=0.1)
items = torch.randn(5, 3)


def hinge_rank_loss(scores, order):
    values = scores.squeeze(1)
    pairs = [torch.clamp(1.0 - (values[i] - values[j]), min=0.0) for i, j in order]
    return sum(pairs) / len(pairs)


order = [(0, 1), (1, 2), (3, 4)]
scores = scorer(items)
loss = hinge_rank_loss(scores, order)
loss.backward()
"""

RADIUS = """
import numpy as np
import torch
torch.manual_seed(0)
decoder = torch.nn.Linear(2, 3)
codes = torch.randn(10, 2)


def radius_penalty(*, positions, weight):
    radii = np.linalg.norm(positions.detach().cpu().numpy(), axis=1)
    penalty = weight * ((radii - 1.0) ** 2).mean()
    return torch.from_numpy(np.asarray(penalty, dtype=np.float32))  # RETURN


points = decoder(codes)
loss = radius_penalty(positions=points, weight=0.5)
loss.backward()
"""
RADIUS_TORCH = """
import numpy as np
import torch
torch.manual_seed(0)
decoder = torch.nn.Linear(2, 3)
codes = torch.randn(10, 2)


def radius_penalty(*, positions, weight):
    radii = positions.norm(dim=1)
    return weight * ((radii - 1.0) ** 2).mean()


points = decoder(codes)
loss = radius_penalty(positions=points, weight=0.5)
loss.backward()
"""


def test_ranking_loss_names_the_return(tmp_path):
    outcome = run_program(tmp_path, RANKING)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD301"
    assert diagnosis.primary.line == marked_line(RANKING, "RETURN")
    assert any("leave torch at line 10 (`scores.detach().squeeze(1).tolist()`)" in (r.note or "")
               for r in diagnosis.related)
    assert diagnosis.help[0].replacement is None
    assert "compute them from the tensors with torch ops" in diagnosis.help[0].message


def test_radius_penalty_by_keyword_names_the_return(tmp_path):
    outcome = run_program(tmp_path, RADIUS)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD301"
    assert diagnosis.primary.line == marked_line(RADIUS, "RETURN")
    assert diagnosis.help[0].replacement is None


def test_the_advised_torch_computation_keeps_the_value_and_trains(tmp_path):
    for buggy, advised in ((RANKING, RANKING_TORCH), (RADIUS, RADIUS_TORCH)):
        before = run_program(tmp_path, buggy)
        assert before.error is not None
        after = run_plain(tmp_path, advised)
        assert after["loss"].grad_fn is not None
        assert all(p.grad is not None for p in (after.get("scorer") or after.get("decoder")).parameters())
        outcome = run_program(tmp_path, advised, "advised.py")
        assert outcome.error is None and not outcome.diagnoses


def test_the_values_are_the_same(tmp_path):
    for buggy, advised in ((RANKING, RANKING_TORCH), (RADIUS, RADIUS_TORCH)):
        original = run_plain(tmp_path, buggy.replace("loss.backward()\n", ""), "original.py")["loss"]
        advised_loss = run_plain(tmp_path, advised, "advised_value.py")["loss"]
        assert torch.allclose(original.double(), advised_loss.detach().double(), atol=1e-6)
