"""AD104 for a write into a loop variable of `for row in tensor:` (stop 43, issue 15).

Iterating a tensor unbinds it: each loop variable is an output of unbind, and an in-place write
into it (or into a view of it) raises "... is a view and is being modified inplace ... returns
multiple views". The line the answers change is the `for` header (pytorch/pytorch#47899: index
the tensor instead), so AD104 names that header as its primary location and the write as related,
when the run shows each link: the loop variable's value is an output of unbind, the written tensor
is it or a view of the same base, and that base is the iterated tensor's. Other AD104 shapes keep
the write as their primary location.
"""

from __future__ import annotations

import sys

import pytest
import torch

from helpers import apply_help, run_plain, run_program


@pytest.fixture(autouse=True, params=["light", "full"])
def doctor_mode(request, monkeypatch):
    monkeypatch.setenv("AUTOGRAD_DOCTOR_MODE", request.param)
    return request.param


def _equal(a, b) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    return torch.allclose(a, b, rtol=1e-5, atol=1e-6)


def _assert_named_at_the_loop(outcome):
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD104"
    assert diagnosis.primary.line == outcome.line("LOOP") and diagnosis.primary.role == "unbound"
    assert diagnosis.primary.end_line == outcome.line("LOOP")
    assert [loc.line for loc in diagnosis.related if loc.role == "modified"] == [outcome.line("WRITE")]
    return diagnosis


# Detection boxes clipped per image by iterating the batch, in a training loop; the answer of
# pytorch/pytorch#47899 indexes the batch instead (re-created in other words and shapes).
BOXES = """
    import torch
    torch.manual_seed(0)
    layer = torch.nn.Linear(3, 12)
    opt = torch.optim.SGD(layer.parameters(), lr=0.05)
    x = torch.randn(4, 3)
    losses = []
    for it in range(2):
        batch = layer(x).view(4, 3, 4)
        for image_boxes in batch:  # LOOP
            image_boxes[:, 2:].clamp_(min=-0.5, max=0.5)  # WRITE
        loss = batch.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.detach())
    result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in layer.parameters()]}
"""


def test_boxes_clipped_while_iterating_the_batch_name_the_loop(tmp_path):
    outcome = run_program(tmp_path, BOXES)
    diagnosis = _assert_named_at_the_loop(outcome)
    assert diagnosis.help[0].location.line == outcome.line("LOOP")
    fixed = run_plain(tmp_path, apply_help(outcome))
    correct = run_plain(tmp_path, outcome.source.replace(
        "for image_boxes in batch:  # LOOP\n",
        "for i in range(len(batch)):\n        image_boxes = batch[i]\n"), "correct.py")
    assert _equal(fixed["result"], correct["result"])


# A held-out shape written before the change was looked at: a module masks each layer's hidden
# state in place while iterating the stacked states.
HIDDEN = """
    import torch
    import torch.nn as nn
    torch.manual_seed(0)


    class Pool(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(6, 6)

        def forward(self, x, mask):
            hidden_states = torch.stack([self.proj(x), torch.tanh(self.proj(x))])
            for h in hidden_states:  # LOOP
                h.mul_(mask)  # WRITE
            return hidden_states.sum(0)


    pool = Pool()
    x = torch.randn(3, 6)
    mask = (torch.rand(3, 1) > 0.3).float()
    out = pool(x, mask)
    out.sum().backward()
    result = {"out": out.detach(), "grads": [p.grad.clone() for p in pool.parameters()]}
"""


def test_hidden_states_masked_in_place_in_a_module_name_the_loop(tmp_path):
    outcome = run_program(tmp_path, HIDDEN)
    diagnosis = _assert_named_at_the_loop(outcome)
    assert diagnosis.related[0].note == "in-place write into h, one of the views unbind returned"
    fixed = run_plain(tmp_path, apply_help(outcome))
    correct = run_plain(tmp_path, outcome.source.replace(
        "for h in hidden_states:  # LOOP\n            h.mul_(mask)  # WRITE\n",
        "hidden_states = hidden_states * mask\n"), "correct.py")
    assert _equal(fixed["result"], correct["result"])


def test_a_loop_that_only_reads_the_rows_stays_silent(tmp_path):
    outcome = run_program(tmp_path, HIDDEN.replace(
        "for h in hidden_states:  # LOOP\n                h.mul_(mask)  # WRITE\n"
        "            return hidden_states.sum(0)",
        "total = 0\n            for h in hidden_states:\n                total = total + h.mul(mask)\n"
        "            return total"))
    assert outcome.error is None and outcome.diagnoses == []


def test_enumerate_over_unbind_with_a_dimension_names_the_loop(tmp_path):
    source = """
        import torch
        torch.manual_seed(0)
        w = torch.randn(4, 3, requires_grad=True)
        seq = (w * 2).view(2, 2, 3)
        for t, step in enumerate(seq.unbind(1)):  # LOOP
            step[:, 0] += t  # WRITE
        loss = (seq ** 2).sum()
        loss.backward()
        result = {"loss": loss.detach(), "grad": w.grad.clone()}
    """
    outcome = run_program(tmp_path, source)
    _assert_named_at_the_loop(outcome)
    fixed = run_plain(tmp_path, apply_help(outcome))
    correct = run_plain(tmp_path, outcome.source.replace(
        "for t, step in enumerate(seq.unbind(1)):  # LOOP\n",
        "for t in range(seq.shape[1]):\n    step = seq[:, t]\n"), "correct.py")
    assert _equal(fixed["result"], correct["result"])


def test_zip_over_a_row_of_a_clone_names_the_loop(tmp_path):
    source = """
        import torch
        image = torch.randn(1, 3, 4, 4, requires_grad=True)
        means, stds = [0.4, 0.5, 0.6], [0.2, 0.3, 0.4]
        shown = image.clone()
        for channel, mean, std in zip(shown[0], means, stds):  # LOOP
            channel.mul_(std).add_(mean)  # WRITE
        result = shown.detach()
    """
    outcome = run_program(tmp_path, source)
    _assert_named_at_the_loop(outcome)


def test_chunk_inside_a_loop_keeps_the_write_as_primary(tmp_path):
    source = """
        import torch
        w = torch.randn(4, requires_grad=True)
        for i in range(2):
            h = w * 2
            a, b = h.chunk(2)
            a.mul_(2)  # WRITE
    """
    outcome = run_program(tmp_path, source)
    assert outcome.diagnosis.code == "AD104" and outcome.diagnosis.primary.line == outcome.line("WRITE")
    assert outcome.diagnosis.primary.role == "modified"


def test_a_loop_over_a_tuple_of_unbound_rows_keeps_the_write_as_primary(tmp_path):
    # The loop iterates a tuple made elsewhere (`rows = base.unbind(0)`), not a tensor: the line
    # that unbinds is not this header, so the write stays primary.
    source = """
        import torch
        base = torch.ones(3, 2, requires_grad=True) * 2
        rows = base.unbind(0)
        for row in rows:
            row.add_(1.0)  # WRITE
    """
    outcome = run_program(tmp_path, source)
    assert outcome.diagnosis.code == "AD104" and outcome.diagnosis.primary.line == outcome.line("WRITE")


def test_a_loop_variable_rebound_to_another_tensors_piece_keeps_the_write_as_primary(tmp_path):
    # The loop iterates `batch`, but the written name is rebound to a piece of another tensor:
    # the view's base is not the iterated tensor.
    source = """
        import torch
        w = torch.randn(2, 3, requires_grad=True)
        batch = w * 2
        other = w * 3
        for row in batch:
            row = other.unbind(0)[0]
            row.add_(1.0)  # WRITE
    """
    outcome = run_program(tmp_path, source)
    assert outcome.diagnosis.code == "AD104" and outcome.diagnosis.primary.line == outcome.line("WRITE")


def test_a_loop_over_a_property_does_not_run_the_property_again(tmp_path, monkeypatch):
    # Deciding whether the loop iterates a tensor reads the iterable's value in the live frame.
    # A property of the user's runs code (here it counts its reads): the doctor must not run it,
    # so the property is read once, as without the doctor, and the write stays primary (the
    # iterated tensor is not known without running the user's code).
    (tmp_path / "reads_lib.py").write_text(
        "READS = []\n"
        "class Detections:\n"
        "    def __init__(self, boxes):\n"
        "        self._boxes = boxes\n"
        "    @property\n"
        "    def boxes(self):\n"
        "        READS.append(1)\n"
        "        return self._boxes\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "reads_lib", raising=False)
    source = """
        import torch
        import reads_lib
        layer = torch.nn.Linear(3, 12)
        detections = reads_lib.Detections(layer(torch.randn(4, 3)).view(4, 3, 4))
        for image_boxes in detections.boxes:
            image_boxes[:, 2:].clamp_(min=-0.5, max=0.5)  # WRITE
    """
    outcome = run_program(tmp_path, source)
    assert sys.modules["reads_lib"].READS == [1]
    assert outcome.diagnosis.code == "AD104" and outcome.diagnosis.primary.line == outcome.line("WRITE")


def test_live_values_read_torch_attributes_and_items_but_run_no_user_code():
    from autograd_doctor.analysis.live_values import expression_value
    import ast

    calls = []

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = torch.nn.Sequential(torch.nn.Linear(2, 2))
            self.register_buffer("scale", torch.ones(2))
            self.plain = [torch.zeros(3, 2)]

        @property
        def counted(self):
            calls.append("property")
            return self.scale

        def __getitem__(self, index):
            calls.append("getitem")
            return self.scale

    model = Model()
    values = {"model": model, "i": 1, "x": torch.arange(6.0).view(3, 2)}

    def read(text):
        return expression_value(values.get, ast.parse(text, mode="eval").body)

    assert read("model.encoder[0].weight") is model.encoder[0].weight
    assert read("model.scale") is model.scale
    assert torch.equal(read("x[i]"), torch.tensor([2.0, 3.0])) and torch.equal(read("x[:, -1]"), torch.tensor([1.0, 3.0, 5.0]))
    assert read("model.plain[0].T").shape == (2, 3)
    assert read("model.counted") is None and read("model[0]") is None and read("model.missing") is None
    assert calls == []
