"""AD101 when an nn.Embedding created with max_norm renormalizes its own weight in place at a
lookup, after an earlier use of that weight saved it for backward. The module has no
inplace=False; the line to change is the earlier use, which clones the weight (as nn.Embedding's
documentation says), and the change keeps the program's meaning: its gradients equal those of
the original run under torch.autograd.graph.allow_mutation_on_saved_tensors()."""

from __future__ import annotations

import runpy

import torch

from helpers import apply_help, run_as_script, run_plain, write_program

CATALOGUE_SCORES_THEN_LOOKUP = """
    import torch
    from torch import nn
    import torch.nn.functional as F

    torch.manual_seed(0)
    users = nn.Embedding(5, 4)
    items = nn.Embedding(9, 4, max_norm=1.0)
    optimizer = torch.optim.SGD(list(users.parameters()) + list(items.parameters()), lr=0.1)
    for user, positive in [(0, 3), (2, 7), (4, 1)]:
        u = users(torch.tensor([user]))
        catalogue = F.linear(u, items.weight)  # USE
        chosen = (u * items(torch.tensor([positive]))).sum()  # LOOKUP
        loss = torch.logsumexp(catalogue, dim=1).sum() - chosen
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    result = [users.weight.detach().clone(), items.weight.detach().clone()]
"""


def test_the_earlier_use_of_the_weight_is_the_line_to_change(tmp_path):
    outcome = run_as_script(tmp_path, CATALOGUE_SCORES_THEN_LOOKUP)
    assert "modified by an inplace operation" in str(outcome.error)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD101"
    assert diagnosis.primary.line == outcome.line("USE")
    assert outcome.line("LOOKUP") in {location.line for location in diagnosis.related}
    assert any("max_norm" in note and "inplace=True" not in note for note in diagnosis.notes)
    assert diagnosis.help[0].replacement == "catalogue = F.linear(u, items.weight.clone())"


def test_the_clone_keeps_the_gradients_of_the_original_under_the_oracle(tmp_path):
    outcome = run_as_script(tmp_path, CATALOGUE_SCORES_THEN_LOOKUP)
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    original = write_program(tmp_path, CATALOGUE_SCORES_THEN_LOOKUP, "original.py")
    with torch.autograd.graph.allow_mutation_on_saved_tensors():
        oracle = runpy.run_path(original, run_name="__main__")
    assert all(torch.equal(a, b) for a, b in zip(fixed["result"], oracle["result"]))
    assert not torch.equal(fixed["result"][0], run_plain(tmp_path, "import torch\nfrom torch import nn\n"
                                                         "torch.manual_seed(0)\nw = nn.Embedding(5, 4).weight\n",
                                                         "initial.py")["w"])  # the users trained


def test_an_activation_created_with_inplace_true_keeps_its_definition_help(tmp_path):
    outcome = run_as_script(tmp_path, """
        import torch
        from torch import nn

        act = nn.ReLU(inplace=True)  # DEFINED
        x = torch.randn(4, requires_grad=True)
        y = torch.sigmoid(x)
        z = act(y)
        (y * z).sum().backward()
    """)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD101" and diagnosis.primary.line == outcome.line("DEFINED")
    assert any("inplace=True" in note for note in diagnosis.notes)
