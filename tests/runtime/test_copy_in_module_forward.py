"""A loss term copied by value inside a module's forward(), `torch.tensor([...])` written over
several lines (and nested in another `torch.tensor`), the module called as `solver(...)`: the
term trains nothing and nothing is raised. AD304 follows the copy to the loss through the line
that called the module (the copy's stack), and its help turns every `torch.tensor([...])` of the
statement into `torch.stack([...])`, which keeps the graph (set 11's ESPnet PIT solver)."""

from __future__ import annotations

import torch

from helpers import apply_help, run_plain, run_program

PAIRWISE_TERMS_COPIED = """
    import torch
    from torch import nn
    import torch.nn.functional as F


    class PairedL1(nn.Module):
        def forward(self, predictions, targets, order):
            terms = torch.tensor(
                [
                    torch.tensor(  # COPY
                        [F.l1_loss(predictions[i][k], targets[j][k]) for i, j in enumerate(pairing)]
                    ).mean()
                    for k, pairing in enumerate(order)
                ]
            )
            return terms.mean()


    torch.manual_seed(0)
    model = nn.Linear(6, 6)
    paired = PairedL1()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, targets = torch.randn(4, 6), [torch.randn(4, 3), torch.randn(4, 3)]
    order = [(1, 0), (0, 1), (1, 0), (0, 1)]
    for step in range(3):
        outputs = model(x).chunk(2, dim=1)
        main = F.mse_loss(outputs[0], targets[0])
        extra = paired(outputs, targets, order)
        loss = main + 0.5 * extra
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    result = [p.detach().clone() for p in model.parameters()]
"""

INTENDED = PAIRWISE_TERMS_COPIED.replace("torch.tensor(", "torch.stack(")


def test_a_copy_made_in_a_module_forward_is_named_as_a_term_of_the_loss(tmp_path):
    outcome = run_program(tmp_path, PAIRWISE_TERMS_COPIED)
    assert outcome.error is None
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD304"]
    assert diagnosis.primary.line == outcome.line("COPY")


def test_the_help_stacks_the_copy_and_the_copy_around_it_and_trains_as_intended(tmp_path):
    outcome = run_program(tmp_path, PAIRWISE_TERMS_COPIED)
    outcome.diagnoses = [d for d in outcome.diagnoses if d.code == "AD304"]
    changed = apply_help(outcome)
    assert "torch.tensor(" not in changed and changed.count("torch.stack(") == 2
    fixed = run_plain(tmp_path, changed, "fixed.py")
    intended = run_plain(tmp_path, INTENDED, "intended.py")
    original = run_plain(tmp_path, PAIRWISE_TERMS_COPIED, "original.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["result"], intended["result"]))
    # The copied term did train nothing: the intended program's weights differ from the original's.
    assert not all(torch.equal(a, b) for a, b in zip(original["result"], intended["result"]))
