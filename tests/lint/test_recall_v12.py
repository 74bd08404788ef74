"""Recall on the causes of misses in the r300-r319 re-creations: each case the
linter now reports really shows its bug when run, its corrected twin stays
silent and computes what a reference computes, and a similar correct pattern
stays silent (and really runs)."""

from __future__ import annotations

import textwrap

import pytest
import torch

from autograd_doctor.lint import lint_source


def _load(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "case.py", "exec"), namespace)
    return namespace


def _findings(source: str) -> list[tuple[int, str]]:
    return sorted((f.line, f.code) for f in lint_source(source, "case.py"))


def _line(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


# Weights made with `requires_grad=True`, then converted with `.type(dtype)`, where
# `dtype` is a top-level name bound once to a tensor type of another dtype: the
# conversion copies, so the names hold non-leaves whose `.grad` stays None.
WEIGHTS_CAST_THROUGH_A_TOP_LEVEL_DTYPE = textwrap.dedent("""
    import torch

    dtype = torch.DoubleTensor

    def train(x, y, lr=0.1, steps=2):
        w = torch.randn(3, 2, requires_grad=True).type(dtype)
        for _ in range(steps):
            loss = (x.type(dtype) @ w - y.type(dtype)).pow(2).sum()
            loss.backward()
            with torch.no_grad():
                w -= lr * w.grad
            w.grad.zero_()
        return w

    def main():
        torch.manual_seed(0)
        return train(torch.randn(4, 3), torch.randn(4, 2))
""")


def test_weights_cast_through_a_top_level_dtype_are_found():
    source = WEIGHTS_CAST_THROUGH_A_TOP_LEVEL_DTYPE
    assert _findings(source) == [(_line(source, "w -= lr * w.grad"), "ADL020")]
    with pytest.warns(UserWarning, match="not a leaf"), pytest.raises(TypeError):
        _load(source)["main"]()


def test_weights_made_in_the_dtype_are_silent_and_train_as_a_reference():
    source = WEIGHTS_CAST_THROUGH_A_TOP_LEVEL_DTYPE.replace(
        "torch.randn(3, 2, requires_grad=True).type(dtype)",
        "torch.randn(3, 2).type(dtype).requires_grad_()")
    assert _findings(source) == []
    trained = _load(source)["main"]()
    torch.manual_seed(0)  # the same draws as main(): x, y, then the weights
    x, y = torch.randn(4, 3).double(), torch.randn(4, 2).double()
    w = torch.randn(3, 2).double()
    for _ in range(2):
        w = w - 0.1 * 2 * x.t() @ (x @ w - y)  # the gradient of the squared error
    assert torch.allclose(trained.detach(), w)


def test_conversion_to_a_dtype_that_may_be_the_factorys_own_is_silent():
    """`dtype` is `torch.FloatTensor` on a CPU machine: `.type(dtype)` of a float32
    factory returns the leaf itself, and the update runs."""
    source = WEIGHTS_CAST_THROUGH_A_TOP_LEVEL_DTYPE.replace(
        "dtype = torch.DoubleTensor",
        "dtype = torch.cuda.FloatTensor if torch.cuda.is_available() else torch.FloatTensor")
    assert _findings(source) == []
    if not torch.cuda.is_available():
        _load(source)["main"]()


# A region of a tensor overwritten with its own transpose: the copy's source and
# destination are the same memory with other strides (DCG's payoff matrices).
REGION_OVERWRITTEN_WITH_ITS_TRANSPOSE = textwrap.dedent("""
    import torch

    def payoffs(weight, inputs, n=2):
        output = torch.matmul(inputs, weight)
        output = output.view(*(list(output.shape[:-1]) + [n, n]))
        output[1] = output[1].transpose(dim0=-2, dim1=-1)
        return output.mean(dim=0)

    def main():
        torch.manual_seed(0)
        weight = torch.randn(3, 4, requires_grad=True)
        inputs = torch.randn(2, 5, 3)
        result = payoffs(weight, inputs)
        result.sum().backward()
        return result, weight.grad
""")


def test_region_overwritten_with_its_own_transpose_is_found():
    source = REGION_OVERWRITTEN_WITH_ITS_TRANSPOSE
    assert _findings(source) == [(_line(source, "output[1] = output[1]"), "ADL010")]
    with pytest.raises(RuntimeError, match="single memory location"):
        _load(source)["main"]()


def test_region_overwritten_with_a_copy_of_its_transpose_is_silent_and_correct():
    source = REGION_OVERWRITTEN_WITH_ITS_TRANSPOSE.replace(
        "output[1].transpose(dim0=-2, dim1=-1)", "output[1].transpose(dim0=-2, dim1=-1).clone()")
    assert _findings(source) == []
    result, grad = _load(source)["main"]()
    torch.manual_seed(0)
    weight = torch.randn(3, 4, requires_grad=True)
    inputs = torch.randn(2, 5, 3)
    output = torch.matmul(inputs, weight).view(2, 5, 2, 2)
    reference = torch.stack([output[0], output[1].transpose(-2, -1)]).mean(dim=0)
    reference.sum().backward()
    assert torch.equal(result, reference) and torch.equal(grad, weight.grad)


def test_other_region_written_with_a_transpose_is_silent():
    """`output[0] = output[1].transpose(...)`: the regions are disjoint, and it runs."""
    source = REGION_OVERWRITTEN_WITH_ITS_TRANSPOSE.replace(
        "output[1] = output[1].transpose", "output[0] = output[1].transpose")
    assert _findings(source) == []
    _load(source)["main"]()


# A helper undoes a normalisation channel by channel in place on a copy of its
# argument, iterated with `zip`; the caller marks its own argument with
# `requires_grad_(True)` and backpropagates to it first (FlashTorch's saliency).
CHANNELS_OF_A_COPY_WRITTEN_IN_PLACE = textwrap.dedent("""
    import torch

    def denormalize(tensor, means=(0.485, 0.456, 0.406), stds=(0.229, 0.224, 0.225)):
        denormalized = tensor.clone()
        for channel, mean, std in zip(denormalized[0], means, stds):
            channel.mul_(std).add_(mean)
        return denormalized

    def saliency(model, input_):
        input_.requires_grad_(True)
        model(input_).sum().backward()
        return denormalize(input_), input_.grad.abs()

    def main():
        torch.manual_seed(0)
        model = torch.nn.Conv2d(3, 2, 3)
        return saliency(model, torch.randn(1, 3, 5, 5))
""")


def test_channels_of_a_copy_of_a_leaf_written_in_place_are_found():
    source = CHANNELS_OF_A_COPY_WRITTEN_IN_PLACE
    assert _findings(source) == [(_line(source, "channel.mul_(std)"), "ADL015")]
    with pytest.raises(RuntimeError, match="is a view and is being modified inplace"):
        _load(source)["main"]()


def test_channels_of_a_detached_copy_are_silent_and_correct():
    source = CHANNELS_OF_A_COPY_WRITTEN_IN_PLACE.replace("tensor.clone()", "tensor.detach().clone()")
    assert _findings(source) == []
    image, grad = _load(source)["main"]()
    torch.manual_seed(0)
    model = torch.nn.Conv2d(3, 2, 3)
    x = torch.randn(1, 3, 5, 5, requires_grad=True)
    model(x).sum().backward()
    mean = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
    std = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)
    assert torch.allclose(image, x.detach() * std + mean) and torch.equal(grad, x.grad.abs())


def test_channels_of_a_copy_of_data_are_silent():
    """No caller hands the helper a tensor that requires grad: the in-place writes run."""
    source = CHANNELS_OF_A_COPY_WRITTEN_IN_PLACE.replace(
        "    input_.requires_grad_(True)\n    model(input_).sum().backward()\n"
        "    return denormalize(input_), input_.grad.abs()",
        "    with torch.no_grad():\n        score = model(input_).sum()\n"
        "    return denormalize(input_), score")
    assert "requires_grad_" not in source
    assert _findings(source) == []
    _load(source)["main"]()


# A buffer made once, before the training loop, into which each step scatters a
# layer's output before the loss reads it: the write is recorded on the buffer,
# so the next step's backward reaches the previous step's freed graph.
BUFFER_WRITTEN_IN_EVERY_STEP = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class SlotReader(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(10, 4)
            self.readout = nn.Linear(12, 1)

    def train(model, optimizer, batches):
        slots = torch.zeros(3, 4)
        for tokens, slot_index, target in batches:
            token_emb = model.embedding(tokens)
            slots[slot_index] = token_emb
            pred = model.readout(slots.view(1, -1))
            loss = (pred - target).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        return slots

    def main():
        torch.manual_seed(0)
        model = SlotReader()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        batches = [(torch.tensor([1, 2]), torch.tensor([0, 2]), torch.ones(1, 1)),
                   (torch.tensor([3, 4]), torch.tensor([1, 2]), torch.ones(1, 1))]
        return model, train(model, optimizer, batches)
""")


def test_buffer_written_with_a_layer_output_in_every_step_is_found():
    source = BUFFER_WRITTEN_IN_EVERY_STEP
    assert _findings(source) == [(_line(source, "loss.backward()"), "ADL019")]
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        _load(source)["main"]()


def test_buffer_cut_after_each_backward_is_silent_and_trains_as_a_reference():
    source = BUFFER_WRITTEN_IN_EVERY_STEP.replace(
        "        optimizer.step()\n", "        optimizer.step()\n        slots.detach_()\n")
    assert "slots.detach_()" in source
    assert _findings(source) == []
    model, slots = _load(source)["main"]()
    # the reference: the buffer's earlier contents enter each step as constants
    torch.manual_seed(0)
    ref = _load(BUFFER_WRITTEN_IN_EVERY_STEP)["SlotReader"]()
    optimizer = torch.optim.SGD(ref.parameters(), lr=0.1)
    buffer = torch.zeros(3, 4)
    for tokens, index in ((torch.tensor([1, 2]), torch.tensor([0, 2])), (torch.tensor([3, 4]), torch.tensor([1, 2]))):
        mask = torch.zeros(3, 1)
        mask[index] = 1
        emb = ref.embedding(tokens)
        full = torch.zeros(3, 4).index_copy(0, index, emb)
        current = buffer * (1 - mask) + full
        loss = (ref.readout(current.view(1, -1)) - 1).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        buffer = current.detach()
    assert torch.allclose(slots, buffer)
    assert all(torch.allclose(a, b) for a, b in zip(model.parameters(), ref.parameters()))


def test_buffer_made_in_each_step_is_silent():
    """A fresh buffer per step holds only that step's graph."""
    source = BUFFER_WRITTEN_IN_EVERY_STEP.replace(
        "    slots = torch.zeros(3, 4)\n    for tokens, slot_index, target in batches:\n",
        "    for tokens, slot_index, target in batches:\n        slots = torch.zeros(3, 4)\n")
    assert _findings(source) == []
    _load(source)["main"]()


# A helper backpropagates a loss computed from the logits it is handed; the
# training loop hands it the logits of a step whose loss it has already
# backpropagated (Sophia's Hessian estimate).
HELPER_BACKPROPAGATES_FREED_LOGITS = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    def estimate_curvature(logits):
        y_sample = torch.distributions.Categorical(logits=logits).sample()
        loss_sampled = F.cross_entropy(logits, y_sample)
        loss_sampled.backward()

    def train(model, optimizer, batches):
        for X, Y in batches:
            logits = model(X)
            loss = F.cross_entropy(logits, Y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            estimate_curvature(logits)
            grads = [p.grad.clone() for p in model.parameters()]
            optimizer.zero_grad()
        return grads

    def main():
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        batches = [(torch.randn(5, 4), torch.randint(0, 3, (5,)))]
        return model, train(model, optimizer, batches)
""")


def test_helper_backpropagating_logits_whose_graph_was_freed_is_found():
    source = HELPER_BACKPROPAGATES_FREED_LOGITS
    assert _findings(source) == [(_line(source, "loss_sampled.backward()"), "ADL019")]
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        _load(source)["main"]()


def test_helper_given_fresh_logits_is_silent_and_computes_the_reference():
    source = HELPER_BACKPROPAGATES_FREED_LOGITS.replace(
        "        estimate_curvature(logits)\n", "        estimate_curvature(model(X))\n")
    assert _findings(source) == []
    torch.manual_seed(0)  # the sampled labels draw from the same generator: compare in one run
    namespace = _load(source)
    model, grads = namespace["main"]()
    assert all(g.shape == p.shape and torch.isfinite(g).all() for g, p in zip(grads, model.parameters()))


def test_helper_after_a_backward_that_retains_the_graph_is_silent():
    source = HELPER_BACKPROPAGATES_FREED_LOGITS.replace(
        "        loss.backward()\n        optimizer.step()\n",
        "        loss.backward(retain_graph=True)\n")
    assert "retain_graph=True" in source
    assert _findings(source) == []
    _load(source)["main"]()


# A quantisation-aware layer folds the batch norm it holds into its convolution:
# the batch statistics come from `F.conv2d(x, self.conv.weight)` and update the
# batch norm's running mean without `.detach()`.
FOLDED_BATCH_NORM_KEEPS_THE_GRAPH = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class ConvBNFolded(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(2, 3, 3, padding=1, bias=False)
            self.bn = nn.BatchNorm2d(3)

        def forward(self, x):
            y = F.conv2d(x, self.conv.weight, padding=1)
            mean = y.transpose(0, 1).reshape(3, -1).mean(1)
            self.bn.running_mean = 0.9 * self.bn.running_mean + 0.1 * mean
            std = torch.sqrt(self.bn.running_var + self.bn.eps)
            weight = self.conv.weight * (self.bn.weight / std).view(-1, 1, 1, 1)
            return F.conv2d(x, weight, self.bn.bias - self.bn.weight * mean / std, padding=1)

    def main():
        torch.manual_seed(0)
        layer = ConvBNFolded()
        optimizer = torch.optim.SGD(layer.parameters(), lr=0.01)
        for _ in range(2):
            loss = layer(torch.randn(2, 2, 4, 4)).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        return layer
""")


def test_batch_norm_statistic_kept_with_its_graph_is_found():
    source = FOLDED_BATCH_NORM_KEEPS_THE_GRAPH
    assert _findings(source) == [(_line(source, "self.bn.running_mean = "), "ADL017")]
    layer = _load(source)["main"]()
    assert layer.bn.running_mean.grad_fn is not None  # two steps' graphs, chained


def test_batch_norm_statistic_of_detached_values_is_silent_and_correct():
    source = FOLDED_BATCH_NORM_KEEPS_THE_GRAPH.replace("0.1 * mean\n", "0.1 * mean.detach()\n")
    assert _findings(source) == []
    layer = _load(source)["main"]()
    assert layer.bn.running_mean.grad_fn is None
    reference = _load(FOLDED_BATCH_NORM_KEEPS_THE_GRAPH)["main"]()  # same values, with a graph
    assert torch.equal(layer.bn.running_mean, reference.bn.running_mean.detach())
    assert torch.equal(layer.conv.weight, reference.conv.weight)


def test_batch_norm_statistic_of_data_is_silent():
    """The running mean of the input (data), not of the convolution's output."""
    source = FOLDED_BATCH_NORM_KEEPS_THE_GRAPH.replace(
        "0.1 * mean\n", "0.1 * x.mean((0, 2, 3)).repeat(2)[:3]\n")
    assert _findings(source) == []
    _load(source)["main"]()


def test_items_of_a_list_parameter_written_in_a_zip_or_enumerate_loop_are_silent():
    """`for i, _results in enumerate(results)`: the parameter itself (or a slice of
    it) may be a list of dicts, no tensor (mmtracking's pipeline transforms)."""
    source = textwrap.dedent("""
        import torch

        def transform(results, scales):
            outs = []
            for i, _results in enumerate(results[1:]):
                _results["scale"] = scales[i]
                outs.append(_results)
            for _results, scale in zip(results, scales):
                _results["img"] = _results["img"] * scale
                outs.append(_results)
            return outs

        def main():
            x = torch.randn(2, requires_grad=True)
            loss = sum(r["img"].sum() for r in transform([{"img": x * 1}, {"img": x * 2}], [1.0, 2.0]))
            loss.backward()
            return x.grad
    """)
    assert _findings(source) == []
    _load(source)["main"]()
