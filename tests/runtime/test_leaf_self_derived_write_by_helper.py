"""AD102 where the value written into a leaf is computed from the leaf alone (a projection onto
its manifold, a renormalisation) and the write is made by a helper the leaf was handed (set 28
part B's hyrnn#11: `self.tangent = ManifoldParameter(tangent, manifold=sphere).proj_()`, where
`proj_` calls a helper that copies into its `dest`). The write sets the leaf's values; the line to
change is where the leaf is owned (the constructor), under torch.no_grad(), not the helper every
caller shares. The help applied gives the correct version's result; the correct version is
silent; a renormalising helper in another shape is found the same way."""

from __future__ import annotations

import torch

from helpers import apply_help, run_plain, run_program

MANIFOLD = """
    import torch
    import torch.nn as nn

    torch.manual_seed(0)


    def copy_into(dest, source):
        return dest.copy_(source)  # WRITE


    class Sphere:
        def projx(self, x):
            return x / x.norm(dim=-1, keepdim=True)


    class ManifoldParameter(nn.Parameter):
        def __new__(cls, data=None, manifold=None, requires_grad=True):
            instance = nn.Parameter.__new__(cls, data, requires_grad)
            instance.manifold = manifold
            return instance

        def proj_(self):
            return copy_into(self, self.manifold.projx(self))


    class Head(nn.Module):
        def __init__(self):
            super().__init__()
            self.direction = ManifoldParameter(torch.randn(2, 3), manifold=Sphere()).proj_()  # OWNER

        def forward(self, x):
            return x @ self.direction.t()


    head = Head()
    optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
    for step in range(3):
        loss = head(torch.randn(4, 3)).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            head.direction.proj_()
    result = [p.detach().clone() for p in head.parameters()]
"""

CORRECT = MANIFOLD.replace(
    "            self.direction = ManifoldParameter(torch.randn(2, 3), manifold=Sphere()).proj_()  # OWNER",
    "            with torch.no_grad():\n"
    "                self.direction = ManifoldParameter(torch.randn(2, 3), manifold=Sphere()).proj_()  # OWNER")

RENORM = """
    import torch
    import torch.nn as nn


    def renorm_(weight, max_norm=1.0):
        norms = weight.norm(dim=1, keepdim=True).clamp_min(max_norm)
        weight.mul_(max_norm / norms)  # WRITE


    class Embedding(nn.Module):
        def __init__(self):
            super().__init__()
            self.table = nn.Parameter(torch.randn(5, 4) * 3)
            renorm_(self.table)  # OWNER


    torch.manual_seed(2)
    model = Embedding()
"""


def test_the_line_where_the_leaf_is_owned_is_named(tmp_path):
    outcome = run_program(tmp_path, MANIFOLD)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD102", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("OWNER")
    assert any(r.line == outcome.line("WRITE") for r in diagnosis.related)
    assert "computed from the leaf alone" in " ".join(diagnosis.notes)
    assert diagnosis.help[0].replacement.startswith("with torch.no_grad():\n")
    assert diagnosis.help[0].location.line == outcome.line("OWNER")


def test_the_help_applied_equals_the_correct_version_which_is_silent(tmp_path):
    outcome = run_program(tmp_path, MANIFOLD)
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    correct = run_plain(tmp_path, CORRECT, "correct.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["result"], correct["result"]))
    assert not run_program(tmp_path, CORRECT, "correct_run.py").diagnoses


def test_a_renormalising_helper_in_another_shape(tmp_path):
    outcome = run_program(tmp_path, RENORM)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD102", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("OWNER")
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    assert fixed["model"].table.norm(dim=1).max() <= 1.0 + 1e-6
    assert fixed["model"].table.requires_grad


def test_a_value_from_other_tensors_is_not_called_self_derived(tmp_path):
    # The value written comes from another trained tensor: not a projection of the leaf's own values.
    outcome = run_program(tmp_path, """
        import torch

        def blend_(dest, other):
            dest.copy_(0.5 * dest + 0.5 * other)

        w = torch.nn.Parameter(torch.randn(3))
        other = torch.nn.Parameter(torch.randn(3))
        optimizer = torch.optim.SGD([w, other], lr=0.1)
        blend_(w, other)
    """)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD102"
    assert "computed from the leaf alone" not in " ".join(diagnosis.notes)
