"""Recall on the causes of misses in the r210-r229 re-creations (and the open
causes that r155 and r182 showed): each case the linter now reports really
fails, its corrected twin stays silent and computes what a reference computes,
and a similar correct pattern stays silent (and really runs)."""

from __future__ import annotations

import textwrap

import pytest
import torch
import torch.nn.functional as F

from autograd_doctor.lint import lint_source


def _load(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "case.py", "exec"), namespace)
    return namespace


def _findings(source: str) -> list[tuple[int, str]]:
    return sorted((f.line, f.code) for f in lint_source(source, "case.py"))


# An unannotated parameter that a helper hands to an op keeping it (`F.softplus`
# keeps its input), then multiplies in place: a hazard for the tensor a caller
# passes at that position.  The forward passes a layer's output there.
HELPER_WRITES_ITS_SAVED_PARAMETER = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    def soft_gate(x, inplace=False):
        inner = F.softplus(x).tanh()
        return x.mul_(inner) if inplace else x.mul(inner)

    class GatedBlock(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)

        def forward(self, x):
            return soft_gate(self.lin(x), True)

    def train_step(block, x):
        loss = block(x).sum()
        loss.backward()
        return loss
    """)

HELPER_WRITES_OUT_OF_PLACE = HELPER_WRITES_ITS_SAVED_PARAMETER.replace(
    "return soft_gate(self.lin(x), True)", "return soft_gate(self.lin(x), False)").replace(
    "x.mul_(inner) if inplace else x.mul(inner)", "x.mul(inner)")

# The same helper applied in place to the data batch only (no graph reaches the
# written parameter): writing a tensor nothing saved for backward is harmless.
HELPER_WRITES_DATA_ONLY = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    def soft_gate(x, inplace=False):
        inner = F.softplus(x).tanh()
        return x.mul_(inner) if inplace else x.mul(inner)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)

        def forward(self, x):
            return self.lin(x)

    def train_step(block, batch):
        batch = soft_gate(batch.clone(), True)
        loss = block(batch).sum()
        loss.backward()
        return loss
    """)


def test_in_place_write_of_a_saved_untyped_parameter_is_found_where_callers_pass_a_graph():
    assert _findings(HELPER_WRITES_ITS_SAVED_PARAMETER) == [(8, "ADL001")]
    torch.manual_seed(0)
    namespace = _load(HELPER_WRITES_ITS_SAVED_PARAMETER)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        namespace["train_step"](namespace["GatedBlock"](), torch.randn(2, 3))


def test_out_of_place_gate_is_silent_and_matches_a_reference():
    assert _findings(HELPER_WRITES_OUT_OF_PLACE) == []
    torch.manual_seed(0)
    namespace = _load(HELPER_WRITES_OUT_OF_PLACE)
    block, x = namespace["GatedBlock"](), torch.randn(2, 3)
    namespace["train_step"](block, x)
    weight = block.lin.weight.detach().clone().requires_grad_(True)
    h = F.linear(x, weight, block.lin.bias.detach())
    (h * F.softplus(h).tanh()).sum().backward()
    assert torch.allclose(block.lin.weight.grad, weight.grad)


def test_in_place_gate_on_data_only_is_silent_and_runs():
    assert _findings(HELPER_WRITES_DATA_ONLY) == []
    torch.manual_seed(0)
    namespace = _load(HELPER_WRITES_DATA_ONLY)
    block = namespace["Block"]()
    namespace["train_step"](block, torch.randn(2, 3))
    assert block.lin.weight.grad is not None


# A style-transfer loop: the style Gram matrix is computed once, before the loop,
# through a feature network.  Trained, its graph is freed by the first backward;
# frozen by a loop over its parameters, it has no graph and the loop is correct.
STYLE_LOOP = textwrap.dedent("""
    import torch
    import torch.nn as nn

    def gram(features):
        b, c, h, w = features.size()
        f = features.view(b, c, h * w)
        return f.bmm(f.transpose(1, 2)) / (c * h * w)

    def transfer(style_image, content_image, steps=2):
        vgg = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 4, 3, padding=1))
        for parameter in vgg.parameters():
            parameter.requires_grad_(False)
        style_gram = gram(vgg(style_image))
        target = content_image.clone().requires_grad_(True)
        optimizer = torch.optim.Adam([target], lr=0.01)
        for step in range(steps):
            loss = ((gram(vgg(target)) - style_gram) ** 2).sum()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        return target
    """)

STYLE_LOOP_TRAINED_FEATURES = STYLE_LOOP.replace(
    "    for parameter in vgg.parameters():\n        parameter.requires_grad_(False)\n", "")

STYLE_LOOP_FROZEN_BY_ASSIGNMENT = STYLE_LOOP.replace(
    "parameter.requires_grad_(False)", "parameter.requires_grad = False")

STYLE_LOOP_FROZEN_MODULE = STYLE_LOOP.replace(
    "    for parameter in vgg.parameters():\n        parameter.requires_grad_(False)\n",
    "    vgg.requires_grad_(False)\n")


# The feature network freezes itself in its constructor (every instance is frozen).
STYLE_LOOP_FROZEN_CLASS = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class RandomCNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3, padding=1)
            for p in self.parameters():
                p.requires_grad_(False)

        def forward(self, x):
            return torch.relu(self.conv(x))

    def gram(features):
        f = features.flatten(2)
        return f @ f.transpose(1, 2) / f.shape[-1]

    def transfer(style_image, content_image, steps=2):
        model = RandomCNN()
        style_gram = gram(model(style_image))
        target = content_image.clone().requires_grad_(True)
        optimizer = torch.optim.Adam([target], lr=0.01)
        for step in range(steps):
            loss = ((gram(model(target)) - style_gram) ** 2).sum()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        return target
    """)


def _images():
    torch.manual_seed(0)
    return torch.rand(1, 3, 6, 6), torch.rand(1, 3, 6, 6)


def test_gram_matrix_of_trained_features_reused_by_every_backward_is_found():
    assert _findings(STYLE_LOOP_TRAINED_FEATURES) == [(18, "ADL019")]
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        _load(STYLE_LOOP_TRAINED_FEATURES)["transfer"](*_images())


@pytest.mark.parametrize("source", [STYLE_LOOP, STYLE_LOOP_FROZEN_BY_ASSIGNMENT, STYLE_LOOP_FROZEN_MODULE,
                                    STYLE_LOOP_FROZEN_CLASS],
                         ids=["requires_grad_", "requires_grad-assignment", "module-requires_grad_",
                              "frozen-in-its-constructor"])
def test_gram_matrix_of_frozen_features_is_silent_and_runs(source):
    assert source != STYLE_LOOP_TRAINED_FEATURES
    assert _findings(source) == []
    style, content = _images()
    target = _load(source)["transfer"](style, content)
    assert not torch.equal(target.detach(), content)


# LIO's coordinate head: a name re-bound to a view of itself (`x = x.view(...)`)
# is still the memory an op saved: writing it breaks that op's backward.
RELU_OUTPUT_VIEWED_THEN_WRITTEN = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class CoordHead(nn.Module):
        def __init__(self):
            super().__init__()
            self.predictor = nn.Sequential(nn.Linear(4, 2), nn.ReLU())

        def forward(self, features, anchor):
            coords = self.predictor(features)
            coords = coords.view(features.size(0), -1)
            coords[:, anchor] = 0.
            return coords.sum()
    """)

RELU_OUTPUT_VIEWED_CLONED = RELU_OUTPUT_VIEWED_THEN_WRITTEN.replace(
    "coords = coords.view(features.size(0), -1)", "coords = coords.view(features.size(0), -1).clone()")

# The same shape on a layer whose last op keeps nothing of its output (`Linear`).
LINEAR_OUTPUT_VIEWED_THEN_WRITTEN = RELU_OUTPUT_VIEWED_THEN_WRITTEN.replace(
    "nn.Sequential(nn.Linear(4, 2), nn.ReLU())", "nn.Sequential(nn.ReLU(), nn.Linear(4, 2))")


def _head(source):
    torch.manual_seed(0)
    return _load(source)["CoordHead"](), torch.randn(3, 4)


def test_write_through_a_self_view_rebinding_is_found():
    assert _findings(RELU_OUTPUT_VIEWED_THEN_WRITTEN) == [(13, "ADL001")]
    head, x = _head(RELU_OUTPUT_VIEWED_THEN_WRITTEN)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        head(x, 1).backward()


def test_cloned_view_is_silent_and_matches_a_reference():
    assert _findings(RELU_OUTPUT_VIEWED_CLONED) == []
    head, x = _head(RELU_OUTPUT_VIEWED_CLONED)
    head(x, 1).backward()
    weight = head.predictor[0].weight.detach().clone().requires_grad_(True)
    reference = torch.relu(F.linear(x, weight, head.predictor[0].bias.detach()))
    mask = torch.ones(3, 2)
    mask[:, 1] = 0.
    (reference * mask).sum().backward()
    assert torch.allclose(head.predictor[0].weight.grad, weight.grad)


def test_view_of_an_output_nothing_saved_is_silent_and_runs():
    assert _findings(LINEAR_OUTPUT_VIEWED_THEN_WRITTEN) == []
    head, x = _head(LINEAR_OUTPUT_VIEWED_THEN_WRITTEN)
    head(x, 1).backward()
    assert head.predictor[1].weight.grad is not None


# IGOS++'s line search narrows a boolean mask with a test on the masked items:
# the index of the write is the written tensor itself.
MASK_INDEXED_BY_ITSELF = textwrap.dedent("""
    import torch

    def still_too_large(losses, base_losses, steps):
        active = torch.ones(losses.size(0), dtype=torch.bool)
        for step in steps:
            active[active] = losses[active] > base_losses[active] - step
        return active
    """)

MASK_INDEXED_BY_A_COPY = MASK_INDEXED_BY_ITSELF.replace("active[active] =", "active[active.clone()] =")

# Indexing with a new mask computed from the tensor is fine (the comparison copies).
VALUES_INDEXED_BY_A_COMPARISON = MASK_INDEXED_BY_ITSELF.replace(
    "active[active] = losses[active] > base_losses[active] - step",
    "losses[losses > base_losses] -= step")


def _losses():
    torch.manual_seed(0)
    return torch.rand(5), torch.rand(5) * 0.5, [0.1, 0.2]


def test_mask_indexed_by_itself_is_found():
    assert _findings(MASK_INDEXED_BY_ITSELF) == [(7, "ADL010")]
    with pytest.raises(RuntimeError, match="single memory location"):
        _load(MASK_INDEXED_BY_ITSELF)["still_too_large"](*_losses())


def test_mask_indexed_by_a_copy_is_silent_and_matches_a_reference():
    assert _findings(MASK_INDEXED_BY_A_COPY) == []
    losses, base, steps = _losses()
    active = _load(MASK_INDEXED_BY_A_COPY)["still_too_large"](losses, base, steps)
    expected = torch.ones(5, dtype=torch.bool)
    for step in steps:
        expected = expected & (losses > base - step)
    assert torch.equal(active, expected)


def test_values_indexed_by_a_comparison_are_silent_and_run():
    assert _findings(VALUES_INDEXED_BY_A_COMPARISON) == []
    losses, base, steps = _losses()
    _load(VALUES_INDEXED_BY_A_COMPARISON)["still_too_large"](losses, base, steps)


def test_gram_matrix_of_an_unfrozen_feature_class_is_still_found():
    trained = STYLE_LOOP_FROZEN_CLASS.replace(
        "        for p in self.parameters():\n            p.requires_grad_(False)\n", "")
    assert trained != STYLE_LOOP_FROZEN_CLASS
    assert _findings(trained) == [(25, "ADL019")]
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        _load(trained)["transfer"](*_images())
