"""The saves table's `:inplace` entries against torch: an in-place activation
module keeps the tensor it wrote exactly when its entry says so (a later write
to its result then breaks backward), and the ADL001 fix for the one that does
(`nn.Dropout(inplace=False)` after `nn.ELU(inplace=True)`) trains as the
out-of-place network does."""

from __future__ import annotations

import textwrap

import pytest
import torch
import torch.nn as nn

from autograd_doctor.lint import lint_source
from autograd_doctor.lint import names as N
from autograd_doctor.lint.fixes import fix_source


@pytest.mark.parametrize("kind", sorted(N.INPLACE_ACTIVATION_FUNCTIONALS))
def test_inplace_entry_says_whether_a_later_write_breaks_backward(kind):
    entry = N.saves_table()[f"torch.nn.functional.{N.INPLACE_ACTIVATION_FUNCTIONALS[kind]}:inplace"]
    layer = nn.Threshold(0.5, 0.0, inplace=True) if kind == "Threshold" else getattr(nn, kind)(inplace=True)
    x = torch.randn(6, requires_grad=True)
    out = layer(x * 1)
    out.mul_(0.5)  # what an in-place dropout after it does
    try:
        out.sum().backward()
        broke = False
    except RuntimeError as e:
        assert "modified by an inplace operation" in str(e)
        broke = True
    assert broke == entry["output"]


HEAD = textwrap.dedent("""
    import torch
    import torch.nn as nn

    torch.manual_seed(0)
    copies = nn.Sequential(
        nn.Linear(8, 16),
        nn.Hardswish(inplace=True),
        nn.Dropout(p=0.5, inplace=True),
        nn.Linear(16, 4),
    )
    torch.manual_seed(0)
    keeps = nn.Sequential(
        nn.Linear(8, 16),
        nn.ELU(inplace=True),
        nn.Dropout(p=0.5, inplace=True),
        nn.Linear(16, 4),
    )


    def train_step(net, x):
        net(x).sum().backward()
    """)


def _train(source, name):
    namespace: dict = {}
    exec(compile(source, "head.py", "exec"), namespace)
    net = namespace[name]
    torch.manual_seed(1)
    x = torch.randn(5, 8)
    out = net(x)
    out.sum().backward()
    return out.detach(), [p.grad for p in net.parameters()]


def test_hardswish_then_inplace_dropout_is_silent_and_trains():
    findings = [f for f in lint_source(HEAD, "head.py") if f.code == "ADL001"]
    assert [f.line for f in findings] == [16]  # the Dropout after ELU only
    assert "`nn.ELU` before it" in findings[0].message
    _train(HEAD, "copies")  # backward runs: Hardswish kept a copy of its input
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _train(HEAD, "keeps")


def test_fix_trains_like_the_out_of_place_network():
    fixed, _ = fix_source(HEAD, lambda t: lint_source(t, "head.py"), unsafe=True)
    assert fixed.count("nn.Dropout(p=0.5, inplace=False)") == 1
    assert [f.code for f in lint_source(fixed, "head.py")] == []
    value, grads = _train(fixed, "keeps")
    torch.manual_seed(0)
    reference = nn.Sequential(nn.Linear(8, 16), nn.ELU(), nn.Dropout(p=0.5), nn.Linear(16, 4))
    torch.manual_seed(1)
    x = torch.randn(5, 8)
    expected = reference(x)
    expected.sum().backward()
    assert torch.equal(value, expected.detach())
    # ELU's in-place backward reads its result, the reference's its input: equal
    # up to rounding
    assert all(torch.allclose(g, p.grad) for g, p in zip(grads, reference.parameters()))
