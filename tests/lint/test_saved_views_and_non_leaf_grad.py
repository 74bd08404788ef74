"""ADL001 on what an op keeps that is not a plain name (a view of the name, the
unnamed result an in-place layer writes, an integer index), and ADL020 (`.grad`
of a tensor made by an op from the leaf that requires grad).  Each buggy program
is run to show the failure the finding claims; each silent one is linted as well;
the unsafe fix, applied, computes what a hand-written correct version computes."""

from __future__ import annotations

import textwrap
import warnings

import pytest
import torch

from autograd_doctor.lint import lint_source
from autograd_doctor.lint.fixes import fix_source


def findings(source, code):
    return [(f.line, f.message) for f in lint_source(textwrap.dedent(source), "prog.py") if f.code == code]


def run(source) -> dict:
    namespace: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the non-leaf .grad warning of the buggy version
        exec(compile(textwrap.dedent(source), "prog.py", "exec"), namespace)
    return namespace


def fixed(source) -> str:
    text, _ = fix_source(textwrap.dedent(source), lambda t: lint_source(t, "prog.py"), unsafe=True)
    return text


CONV_ON_TRANSPOSE = """
    import torch
    import torch.nn as nn
    torch.manual_seed(0)
    pos_conv = nn.Conv1d(8, 8, 3, padding=1)
    proj = nn.Linear(8, 8)
    x = proj(torch.randn(2, 5, 8))
    x_conv = pos_conv(x.transpose(1, 2)).transpose(1, 2)
    x += x_conv
    x.pow(2).mean().backward()
    grads = [p.grad for p in (*pos_conv.parameters(), *proj.parameters())]
"""
CONV_ON_TRANSPOSE_CORRECT = CONV_ON_TRANSPOSE.replace("x += x_conv", "x = x + x_conv")


def test_a_saved_view_of_the_name_is_found_and_the_fix_trains_as_the_correct_version():
    assert [line for line, _ in findings(CONV_ON_TRANSPOSE, "ADL001")] == [9]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        run(CONV_ON_TRANSPOSE)
    assert "x = x + x_conv" in fixed(CONV_ON_TRANSPOSE)
    for got, want in zip(run(fixed(CONV_ON_TRANSPOSE))["grads"], run(CONV_ON_TRANSPOSE_CORRECT)["grads"]):
        assert torch.equal(got, want)


@pytest.mark.parametrize("argument", ["x[idx]", "x[[0, 1]]", "x.data", "x.contiguous()"])
def test_a_copy_or_data_of_the_name_is_not_a_saved_view(argument):
    source = f"""
        import torch
        w = torch.randn(3, 3, requires_grad=True)
        v = torch.randn(3, requires_grad=True)
        x = torch.randn(3, 3) @ w
        idx = torch.tensor([0, 1])
        y = {argument} * v
        x += 1
        y.sum().backward()
    """
    assert findings(source, "ADL001") == []
    if argument != "x.contiguous()":  # contiguous() of a contiguous x is x: that one fails
        run(source)


INDEX_WRITTEN = """
    import torch
    torch.manual_seed(0)
    feats = torch.randn(6, 4, requires_grad=True)
    neighbors = torch.tensor([[1, 2], [0, 3], [4, 5]])
    gathered = feats.gather(0, neighbors.view(-1, 1).expand(-1, 4))
    neighbors //= 2
    gathered.sum().backward()
"""


def test_an_index_that_gather_kept_is_found_when_written():
    assert [line for line, _ in findings(INDEX_WRITTEN, "ADL001")] == [7]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        run(INDEX_WRITTEN)


DROPOUT_ON_RELU = """
    import torch
    import torch.nn as nn
    torch.manual_seed(0)

    class FeedForward(nn.Module):
        def __init__(self):
            super().__init__()
            self.linear1 = nn.Linear(8, 16)
            self.linear2 = nn.Linear(16, 8)
            self.activation = nn.ReLU()
            self.dropout = nn.Dropout(0.1, inplace=True)

        def forward(self, g):
            return g + self.linear2(self.dropout(self.activation(self.linear1(g))))

    block = FeedForward()
    torch.manual_seed(1)
    (block(torch.randn(3, 8)) ** 2).mean().backward()
    grads = [p.grad for p in block.parameters()]
"""


def test_an_inplace_layer_on_an_unnamed_saved_output_is_found_and_fixed():
    [(line, message)] = findings(DROPOUT_ON_RELU, "ADL001")
    assert line == 15 and "`self.activation(self.linear1(g))`" in message
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        run(DROPOUT_ON_RELU)
    repaired = fixed(DROPOUT_ON_RELU)
    assert "nn.Dropout(0.1, inplace=False)" in repaired
    correct = DROPOUT_ON_RELU.replace("nn.Dropout(0.1, inplace=True)", "nn.Dropout(0.1)")
    for got, want in zip(run(repaired)["grads"], run(correct)["grads"]):
        assert torch.equal(got, want)


def test_an_inplace_layer_on_an_output_that_is_not_kept_is_not_reported():
    source = DROPOUT_ON_RELU.replace("self.activation(self.linear1(g))", "self.linear1(g)")
    assert findings(source, "ADL001") == []
    run(source)


UNSQUEEZED = """
    import torch
    torch.manual_seed(0)
    w_true = torch.randn(1, 3)
    img = torch.rand(3, requires_grad=True).unsqueeze(0)
    loss = (img * w_true).sum()
    loss.backward()
    step = img.grad.sign()
"""
CAST = """
    import torch
    torch.manual_seed(0)
    x = torch.rand(10, 3)
    w = torch.rand(3, 1, requires_grad=True).type(torch.float64)
    for _ in range(2):
        loss = (x.double() @ w).pow(2).mean()
        loss.backward()
        with torch.no_grad():
            w -= 0.1 * w.grad
            w.grad.zero_()
"""
SCALED = """
    import torch
    torch.manual_seed(0)
    w = torch.randn(4, requires_grad=True) * 0.01
    loss = (w * torch.arange(4.0)).sum()
    loss.backward()
    g = w.grad * 2
"""


@pytest.mark.parametrize("source, line, op", [(UNSQUEEZED, 8, ".unsqueeze()"), (CAST, 10, ".type()"),
                                              (SCALED, 7, "* 0.01")])
def test_grad_of_a_non_leaf_is_found_fails_and_the_fix_gives_the_leaf_its_gradient(source, line, op):
    [(found, message)] = findings(source, "ADL020")
    assert found == line and op in message
    with pytest.raises((TypeError, AttributeError)):  # None.sign(), 0.1 * None, None * 2
        run(source)
    repaired = fixed(source)
    assert "requires_grad=True" not in repaired and ".requires_grad_()" in repaired
    assert findings(repaired, "ADL020") == []
    # the correct version: the name holds the leaf, made without a graph in front of it
    name = {UNSQUEEZED: "img", CAST: "w", SCALED: "w"}[source]
    correct = textwrap.dedent(source).replace(", requires_grad=True", "")
    bind = next(row for row in correct.splitlines() if row.startswith(f"{name} = "))
    correct = correct.replace(bind, f"{bind}\n{name}.requires_grad_()")
    got, want = run(repaired), run(correct)
    assert torch.equal(got[name], want[name]) and torch.equal(got[name].grad, want[name].grad)


def test_a_name_marked_then_cast_is_found_with_a_help_and_no_fix():
    source = """
        import torch
        images = torch.rand(4, 5)
        images.requires_grad = True
        images = images.to(torch.float64)
        loss = images.sum()
        loss.backward()
        step = images.grad.sign()
    """
    [(line, message)] = findings(source, "ADL020")
    assert line == 8 and "images.to(torch.float64).detach().clone().requires_grad_()" in message
    with pytest.raises(AttributeError):
        run(source)


@pytest.mark.parametrize("binding", [
    "w = torch.rand(3, requires_grad=True).to(device)",     # may be the leaf itself
    "w = torch.rand(3, requires_grad=True).float()",        # float32 already: the leaf
    "w = torch.rand(3, dtype=torch.float64, requires_grad=True).double()",
    "w = torch.rand(3, requires_grad=True)",
    "w = torch.rand(3).unsqueeze(0).requires_grad_()",
])
def test_a_leaf_or_a_conversion_that_may_return_it_is_not_reported(binding):
    source = f"""
        import torch
        device = "cpu"
        {binding}
        loss = w.sum()
        loss.backward()
        g = w.grad.sign()
    """
    assert findings(source, "ADL020") == []
    run(source)


def test_retain_grad_or_a_read_before_backward_is_not_reported():
    retained = UNSQUEEZED.replace("loss.backward()", "img.retain_grad()\n    loss.backward()")
    assert findings(retained, "ADL020") == []
    run(retained)
    before = UNSQUEEZED.replace("step = img.grad.sign()", "").replace(
        "loss.backward()", "seen = img.grad\n    loss.backward()")
    assert findings(before, "ADL020") == []


SCALED_INTO_OPTIMIZER = """
    import torch
    torch.manual_seed(0)
    target = torch.randn(6, 8)
    synthetic = torch.randn(6, 8, requires_grad=True) * 0.01
    optimizer = torch.optim.SGD([{"params": [synthetic]}], lr=0.5)
    for _ in range(3):
        loss = (synthetic - target).pow(2).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""


def test_a_non_leaf_given_to_an_optimizer_is_found_and_the_fix_trains_the_leaf():
    [(line, message)] = findings(SCALED_INTO_OPTIMIZER, "ADL020")
    assert line == 6 and "can't optimize a non-leaf Tensor" in message
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        run(SCALED_INTO_OPTIMIZER)
    repaired = fixed(SCALED_INTO_OPTIMIZER)
    assert "synthetic = (torch.randn(6, 8) * 0.01).requires_grad_()" in repaired
    correct = SCALED_INTO_OPTIMIZER.replace(
        "torch.randn(6, 8, requires_grad=True) * 0.01", "(torch.randn(6, 8) * 0.01).requires_grad_(True)")
    assert torch.equal(run(repaired)["synthetic"], run(correct)["synthetic"])


def test_a_slice_of_a_leaf_given_to_an_optimizer_gets_a_help_that_makes_it_a_leaf():
    source = """
        import torch
        table = torch.randn(4, 6, requires_grad=True)
        part = table[1:3]
        optimizer = torch.optim.Adam([part], lr=0.1)
    """
    [(line, message)] = findings(source, "ADL020")
    assert line == 5 and "`part = table[1:3].detach().clone().requires_grad_()`" in message
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        run(source)
    run(source.replace("part = table[1:3]", "part = table[1:3].detach().clone().requires_grad_()"))
    # the leaf itself, or its parameters, are fine
    assert findings(source.replace("[part]", "[table]"), "ADL020") == []
