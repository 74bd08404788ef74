"""AD102: in-place writes to leaves that require grad."""

import torch

from helpers import apply_help, run_plain, run_program


def test_leaf_index_write_names_creation_site(tmp_path):
    source = """
        import torch
        w = torch.zeros(3, requires_grad=True)  # CREATE
        w[0] = 1.0  # WRITE
    """
    outcome = run_program(tmp_path, source)
    assert isinstance(outcome.error, RuntimeError)
    assert "leaf Variable that requires grad" in str(outcome.error)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD102"
    assert diagnosis.primary.line == outcome.line("WRITE")
    assert {loc.role: loc.line for loc in diagnosis.related}["created"] == outcome.line("CREATE")
    assert diagnosis.help[0].replacement == "with torch.no_grad():\n    w[0] = 1.0"
    namespace = run_plain(tmp_path, apply_help(outcome))
    assert torch.equal(namespace["w"].detach(), torch.tensor([1.0, 0.0, 0.0]))
    assert namespace["w"].is_leaf and namespace["w"].requires_grad


def test_manual_sgd_update_on_parameter(tmp_path):
    source = """
        import torch
        from torch import nn
        torch.manual_seed(0)
        model = nn.Linear(3, 1)
        loss = model(torch.randn(4, 3)).pow(2).mean()
        loss.backward()
        for p in model.parameters():
            p -= 0.1 * p.grad  # WRITE
    """
    outcome = run_program(tmp_path, source)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD102"
    assert diagnosis.primary.line == outcome.line("WRITE")
    assert diagnosis.tensor.parameter == "model.weight"
    assert diagnosis.help[0].replacement == "with torch.no_grad():\n    p -= 0.1 * p.grad"
    namespace = run_plain(tmp_path, apply_help(outcome))
    assert namespace["model"].weight.is_leaf


def test_leaf_write_out_of_place_help(tmp_path):
    source = """
        import torch
        w = torch.ones(3, requires_grad=True)  # CREATE
        w.mul_(2)  # WRITE
        w.sum().backward()
    """
    outcome = run_program(tmp_path, source)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD102"
    # No `w = w.mul(2)`: rebinding the leaf's name leaves w.grad None. The help says to
    # give the result a new name, which is what this test then does by hand.
    assert not [h for h in diagnosis.help if h.replacement and h.replacement.startswith("w = ")]
    assert any("new name" in h.message and h.replacement is None for h in diagnosis.help)
    fixed = outcome.source.replace("w.mul_(2)  # WRITE", "w2 = w.mul(2)").replace("w.sum()", "w2.sum()")
    namespace = run_plain(tmp_path, fixed)
    assert torch.equal(namespace["w"].grad, torch.full((3,), 2.0))
