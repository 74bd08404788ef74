"""AD220 on programs it must not report: a masked op made safe (a second `where`, a clamp), a
loss that is itself NaN, and NaN gradients whose cause is not a masked op (a norm at zero next
to a harmless `where`): without the masked op in the source, nothing is said. The buggy programs
with their helps are in tests/silent."""

from __future__ import annotations

import textwrap

import pytest

from helpers import run_plain, run_program

CORRECT = {
    "the input guarded by a second where": """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        layer = nn.Linear(4, 6)
        optimizer = torch.optim.SGD(layer.parameters(), lr=0.1)
        for _ in range(3):
            x = layer(torch.randn(8, 4))
            positive = x > 0
            out = torch.where(positive, torch.sqrt(torch.where(positive, x, torch.ones_like(x))), x)
            loss = out.pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        result = [p.detach().clone() for p in layer.parameters()]
    """,
    "the input clamped before the op": """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        layer = nn.Linear(4, 6)
        optimizer = torch.optim.SGD(layer.parameters(), lr=0.1)
        for _ in range(3):
            x = layer(torch.randn(8, 4))
            out = torch.where(x > 0, x.clamp(min=1e-6).sqrt(), x)
            loss = out.pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        result = [p.detach().clone() for p in layer.parameters()]
    """,
    "a harmless where next to a norm at zero": """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        layer = nn.Linear(4, 4)
        optimizer = torch.optim.SGD(layer.parameters(), lr=0.1)
        for _ in range(2):
            x = layer(torch.randn(8, 4))
            out = torch.where(x > 0, x, 0.1 * x)
            loss = out.pow(2).mean() + torch.norm(x[:1] - x[:1])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        result = [torch.isnan(p).sum() for p in layer.parameters()]
    """,
}


@pytest.mark.parametrize("mode", ["light", "full"])
@pytest.mark.parametrize("name", sorted(CORRECT))
def test_not_reported(tmp_path, name, mode):
    source = CORRECT[name]
    outcome = run_program(tmp_path, source, mode=mode)
    assert outcome.error is None
    assert not [d for d in outcome.diagnoses if d.code == "AD220"], [str(d) for d in outcome.diagnoses]
    plain = run_plain(tmp_path, textwrap.dedent(source))["result"]
    assert all(a.equal(b) for a, b in zip(outcome.namespace["result"], plain))


def test_a_loss_that_is_itself_nan_is_not_this_problem(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        layer = nn.Linear(4, 4)
        x = layer(torch.randn(8, 4))
        out = torch.where(x > 0, torch.sqrt(x), x)
        loss = torch.sqrt(out - 10).mean()
        loss.backward()
    """)
    assert not [d for d in outcome.diagnoses if d.code == "AD220"]


def test_the_condition_computed_from_the_result_gets_advice_not_code(tmp_path):
    """`r = torch.where(torch.isnan(r), 0, r)`: the condition reads the division's own result, so
    it cannot guard the division's input; the line is still named."""
    outcome = run_program(tmp_path, """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        layer = nn.Linear(4, 4)
        optimizer = torch.optim.SGD(layer.parameters(), lr=0.1)
        counts = torch.tensor([0.0, 1.0, 2.0, 0.0])
        for _ in range(2):
            ratio = layer(torch.rand(8, 4)) * 0 / counts  # DIVISION
            ratio = torch.where(torch.isnan(ratio), torch.zeros_like(ratio), ratio)
            loss = ratio.pow(2).mean() + layer.weight.sum()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    """)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD220"]
    assert diagnosis.primary.line == outcome.line("DIVISION")
    assert diagnosis.help[0].replacement is None
