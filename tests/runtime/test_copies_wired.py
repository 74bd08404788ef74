"""AD303/AD304 under watch(): the deepcopy and torch.tensor wrappers report at the user's line."""

import torch

from helpers import apply_help, run_plain, run_program


def test_deepcopy_of_module_holding_non_leaf(tmp_path):
    outcome = run_program(tmp_path, """
        import copy
        import torch
        from torch import nn

        class Cache:
            pass

        model = nn.Linear(3, 3)
        model.cache = Cache()
        model.cache.h = model(torch.randn(2, 3))  # CREATE
        clone = copy.deepcopy(model)  # COPY
    """)
    assert isinstance(outcome.error, RuntimeError)
    assert "deepcopy" in str(outcome.error)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD303"
    assert diagnosis.primary.line == outcome.line("COPY")
    text = str(diagnosis)
    assert "model.cache.h" in text


def test_torch_tensor_of_losses_named_at_the_line(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        w = torch.ones(3, requires_grad=True)
        l1, l2 = (w * 2).sum(), (w * 3).sum()
        total = torch.tensor([l1, l2]).sum()  # COPY
    """)
    assert outcome.error is None
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD304"
    assert diagnosis.primary.line == outcome.line("COPY")
    assert diagnosis.help[0].replacement == "total = torch.stack([l1, l2]).sum()"
    namespace = run_plain(tmp_path, apply_help(outcome) + "\ntotal.backward()\n")
    assert torch.equal(namespace["w"].grad, torch.full((3,), 5.0))


def test_torch_tensor_of_plain_values_is_silent(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        w = torch.ones(3, requires_grad=True)
        values = torch.tensor([(w * 2).sum().item(), 3.0])
        labels = torch.tensor([1, 2, 3])
        frozen = torch.tensor(w.detach())
    """)
    assert [d.code for d in outcome.diagnoses] == []
