"""Set AE's false findings (docs/lint.md, "A thirty-third held-out check: set AE"): three links
that now need evidence.

- ADL023, "the total is kept across the loop's iterations": `loss_accum = 0` at the top of every
  optimizer step, then a counted accumulation window (`for n_i in range(rounds):`) that sums and
  backpropagates each micro-batch's loss, then `optimizer.step()` (physicsnemo's corrdiff). The
  total links only one step's micro-batches, released when it starts again. A total bound once
  before the training, or summed over a loop that iterates the data, is still found.
- ADL023, "what is kept is the backpropagated value": `(g,) = torch.autograd.grad(g, x,
  create_graph=True)`, then `kept.append(g)` (physicsnemo's successive derivatives). The backward's
  own statement binds the name again: what is kept is the gradient. A loss appended after a
  backward that does not rebind it is still found.
- ADL031 (opt-in), "a graph in what is kept": `out, sample = processor.postprocess(out, sample)`
  in an evaluation loop, then `xs.append(sample["x"])` (the FNO repository's residual loop). A
  name handed to the call and bound again from it keeps what it held; the new value unpacked
  beside it is still taken to carry the graph.
"""

from __future__ import annotations

import sys

import torch
import torch.nn.functional as F

from autograd_doctor.lint.engine import Selection, lint_source

WINDOW = """
import torch
import torch.nn.functional as F


def train(model, optimizer, batches, steps, k, totals):
    it = iter(batches)
    step = 0
    while step < steps:
        optimizer.zero_grad()
        window_loss = 0.0
        for micro in range(k):
            x, y = next(it)
            loss = F.mse_loss(model(x), y) / k
            loss.backward()
            window_loss = window_loss + loss  # SUM
        optimizer.step()
        totals.append(window_loss)
        step += 1
"""

# The same window, the total bound once before the training: it spans every step.
NEVER_RESTARTED = WINDOW.replace("        window_loss = 0.0\n", "").replace(
    "    step = 0\n", "    step = 0\n    window_loss = 0.0\n")

# Full-batch descent: the window iterates the data itself, the total spans the data set.
FULL_BATCH = """
import torch
import torch.nn.functional as F


def train(model, optimizer, loader, epochs, totals):
    for epoch in range(epochs):
        optimizer.zero_grad()
        epoch_loss = 0
        for x, y in loader:
            loss = F.mse_loss(model(x), y)
            loss.backward()
            epoch_loss += loss  # SUM
        optimizer.step()
        totals.append(epoch_loss)
"""

DERIVATIVES = """
import torch


def derivatives(f, at, order):
    x = torch.tensor([at], dtype=torch.float64, requires_grad=True)
    value = f(x).sum()
    found = []
    for _ in range(order):
        (value,) = torch.autograd.grad(value, x, create_graph=True)
        found.append(value)  # KEPT
    return found
"""

# A loss appended after a backward that leaves the name alone: its graph is kept.
APPENDED_LOSS = """
import torch
import torch.nn.functional as F


def train(model, optimizer, loader):
    losses = []
    for x, y in loader:
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        (gw,) = torch.autograd.grad(loss, model.weight)
        model.weight.grad = gw
        optimizer.step()
        losses.append(loss)  # KEPT
    return losses
"""

PASS_THROUGH = """
import torch


def collect(model, post, loader):
    model.eval()
    images = []
    for batch in loader:
        logits = model(batch["image"])  # FORWARD
        logits, batch = post.apply(logits, batch)
        images.append(batch["image"])
    return images
"""

# The value unpacked beside the handed-back one is new: taken to carry the logits' graph.
NEW_VALUE = PASS_THROUGH.replace("logits, batch = post.apply(logits, batch)",
                                 "preds, batch = post.apply(logits, batch)").replace(
    'images.append(batch["image"])', "images.append(preds)")


class Post:
    def apply(self, logits, batch):
        return logits.softmax(-1), batch


def found(source: str, code: str):
    return [f.line for f in lint_source(source, filename="<string>", selection=Selection(select=("ALL",)))
            if f.code == code]


def line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def load(source: str, name: str):
    module = type(sys)(name)
    exec(compile(source, name, "exec"), module.__dict__)
    return module


def nodes(tensor) -> int:
    """The autograd nodes reachable from ``tensor``'s grad_fn."""
    seen, todo = set(), [tensor.grad_fn]
    while todo:
        node = todo.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        todo.extend(n for n, _ in node.next_functions)
    return len(seen)


def batches(n):
    torch.manual_seed(0)
    return [(torch.randn(4, 3), torch.randn(4, 2)) for _ in range(n)]


def run_window(source, name, steps, k=3):
    torch.manual_seed(1)
    model = torch.nn.Linear(3, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    totals = []
    load(source, name).train(model, optimizer, batches(steps * k), steps, k, totals)
    return model, totals


def test_a_total_restarted_at_every_step_of_a_counted_window_is_silent_and_bounded():
    assert found(WINDOW, "ADL023") == []
    _, short = run_window(WINDOW, "set_ae_window_short", 2)
    _, long = run_window(WINDOW, "set_ae_window_long", 6)
    assert nodes(short[-1]) == nodes(long[-1])  # one step's micro-batches, whatever the length


def test_a_total_never_restarted_is_still_found_and_grows_and_the_help_trains_the_same():
    assert found(NEVER_RESTARTED, "ADL023") == [line_of(NEVER_RESTARTED, "# SUM")]
    _, short = run_window(NEVER_RESTARTED, "set_ae_never_short", 2)
    model, long = run_window(NEVER_RESTARTED, "set_ae_never_long", 6)
    assert nodes(long[-1]) > 2 * nodes(short[-1])  # grows with the training
    fixed = NEVER_RESTARTED.replace("window_loss + loss  # SUM", "window_loss + loss.item()  # SUM")
    assert found(fixed, "ADL023") == []
    model_fixed, totals = run_window(fixed, "set_ae_never_fixed", 6)
    for a, b in zip(model.parameters(), model_fixed.parameters()):
        assert torch.equal(a, b)
    assert abs(float(long[-1].detach()) - totals[-1]) < 1e-5


def test_a_full_batch_total_over_the_data_is_still_found():
    assert found(FULL_BATCH, "ADL023") == [line_of(FULL_BATCH, "# SUM")]


def test_successive_derivatives_kept_from_the_grad_statement_are_silent_and_right():
    assert found(DERIVATIVES, "ADL023") == []
    got = load(DERIVATIVES, "set_ae_derivatives").derivatives(lambda x: x ** 4, 2.0, 3)
    assert [float(g) for g in got] == [4 * 2.0 ** 3, 12 * 2.0 ** 2, 24 * 2.0]


def test_a_loss_appended_after_a_backward_that_leaves_it_is_still_found_and_keeps_its_graph():
    assert found(APPENDED_LOSS, "ADL023") == [line_of(APPENDED_LOSS, "# KEPT")]
    torch.manual_seed(1)
    model = torch.nn.Linear(3, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = load(APPENDED_LOSS, "set_ae_appended").train(model, optimizer, batches(3))
    assert all(loss.grad_fn is not None for loss in losses)


def test_a_name_handed_back_by_an_unpacking_call_is_silent_and_keeps_no_graph():
    assert found(PASS_THROUGH, "ADL031") == []
    loader = [{"image": torch.randn(2, 3)} for _ in range(3)]
    kept = load(PASS_THROUGH, "set_ae_pass").collect(torch.nn.Linear(3, 4), Post(), loader)
    assert all(image.grad_fn is None for image in kept)


def test_the_new_value_unpacked_beside_it_is_still_found_and_keeps_the_graph():
    assert found(NEW_VALUE, "ADL031") == [line_of(NEW_VALUE, "# FORWARD")]
    loader = [{"image": torch.randn(2, 3)} for _ in range(3)]
    kept = load(NEW_VALUE, "set_ae_new").collect(torch.nn.Linear(3, 4), Post(), loader)
    assert all(pred.grad_fn is not None for pred in kept)
    fixed = NEW_VALUE.replace("    for batch in loader:", "    with torch.no_grad():\n      for batch in loader:")
    assert found(fixed, "ADL031") == []
    kept_fixed = load(fixed, "set_ae_new_fixed").collect(torch.nn.Linear(3, 4), Post(), loader)
    assert all(pred.grad_fn is None for pred in kept_fixed)
