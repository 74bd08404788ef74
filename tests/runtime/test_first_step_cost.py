"""The first step()'s cost (README, "First steps' cost, worked on"): AD249 looks for a wrapper among
the values around the step() call before it reads the optimizer's construction from the source,
and the construction is found among the file's assignments, listed once a file through its
statements. Same outcomes: an explainer built and stepped inside a function is still named, and a
plain training loop stays silent without its file's assignments being listed."""

from __future__ import annotations

import ast
import os

import torch

from autograd_doctor.analysis import stale_optimizer
from autograd_doctor.diagnosis.source import parse_file
from helpers import run_program

EXPLAINER_IN_A_FUNCTION = """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class Explainer(nn.Module):
        def __init__(self, model, n):
            super().__init__()
            self.model = model
            self.edge_mask = nn.Parameter(torch.randn(n, n) * 0.1)

        def forward(self, adj, x):
            return self.model(adj * torch.sigmoid(self.edge_mask) @ x)


    def explain(model, adj, x):
        explainer = Explainer(model, 6)
        optim = torch.optim.Adam(explainer.parameters(), lr=0.05)  # BUILT
        for _ in range(2):
            loss = -F.log_softmax(explainer(adj, x)[0], -1)[1]
            optim.zero_grad()
            loss.backward()
            optim.step()


    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 2))
    adj, x, y = torch.rand(6, 6), torch.randn(6, 3), torch.randint(0, 2, (6,))
    model_optim = torch.optim.Adam(model.parameters(), lr=0.05)
    for _ in range(2):
        loss = F.cross_entropy(model(adj @ x), y)
        model_optim.zero_grad()
        loss.backward()
        model_optim.step()
    model.eval()
    explain(model, adj, x)
"""


def test_a_wrapper_local_to_a_function_is_still_found(tmp_path):
    outcome = run_program(tmp_path, EXPLAINER_IN_A_FUNCTION)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD249"]
    assert diagnosis.primary.line == outcome.line("BUILT")
    assert diagnosis.help[0].replacement == "optim = torch.optim.Adam([explainer.edge_mask], lr=0.05)"


def test_a_plain_loop_is_silent_without_listing_its_assignments(tmp_path):
    before = stale_optimizer._call_assignments.cache_info().misses
    outcome = run_program(tmp_path, """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 1))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        for _ in range(3):
            optimizer.zero_grad()
            model(torch.randn(16, 4)).pow(2).mean().backward()
            optimizer.step()
    """)
    assert outcome.error is None and not outcome.diagnoses
    assert stale_optimizer._call_assignments.cache_info().misses == before


def test_the_assignments_listed_are_those_a_walk_of_every_node_finds():
    """Every `x = call(...)` (one target) of real files, the package's own and torch.optim's: the
    statements-only listing finds the same nodes as `ast.walk`."""
    folders = [os.path.dirname(stale_optimizer.__file__), os.path.dirname(torch.optim.__file__)]
    files = [os.path.join(folder, name) for folder in folders for name in sorted(os.listdir(folder))
             if name.endswith(".py")]
    assert len(files) > 20
    for filename in files:
        tree = parse_file(filename)
        walked = {id(node) for node in ast.walk(tree) if isinstance(node, ast.Assign)
                  and len(node.targets) == 1 and isinstance(node.value, ast.Call)}
        assert {id(node) for node in stale_optimizer._call_assignments(tree)} == walked, filename
