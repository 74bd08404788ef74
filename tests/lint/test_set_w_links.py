"""Set W (docs/lint.md, twenty-fifth check).  The set's first run, with the
rules frozen at c0f64a0, had 9 false alarms; 7 of them had one cause, which
these tests keep fixed next to the real form, each claim run with torch:

* ADL023 on GigaGAN's training steps (https://github.com/lucidrains/gigagan-pytorch,
  `gigagan_pytorch/gigagan_pytorch.py`, `train_discriminator_step` and
  `train_generator_step`, false): in the gradient-accumulation loop,
  `total_divergence += (divergence.item() / grad_accum_every)` sums a Python
  number, and the loop backpropagates `total_loss / grad_accum_every`.  The
  linter took every name of the backward's argument for a loss with a graph,
  the divisor `grad_accum_every` (the method's `int` argument) too, and so the
  number's divisor for a loss summed with its graph.  The divisor of a
  quotient whose dividend holds a name is now a scale, not a loss.
* Kept: the loss itself summed with its graph in the same loop
  (`total += loss` after `(loss / grad_accum_every).backward()`): reported, it
  grows with the steps, and the help applied keeps the logged numbers and the
  trained parameters; a quotient with a constant dividend (`(1.0 / loss)`),
  whose divisor is the loss; and a product, `(loss * scale).backward()`."""

from __future__ import annotations

import textwrap

import torch

from autograd_doctor.lint import lint_source
from autograd_doctor.lint.engine import Selection
from autograd_doctor.lint.fixes import fix_source

ADL023 = Selection(("ADL023",))


def _findings(source: str):
    return [f for f in lint_source(source, "set_w.py") if f.code != "ADL000"]


def _namespace(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "set_w.py", "exec"), namespace)
    return namespace


def _line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def _autograd_nodes(tensor) -> int:
    seen, stack = set(), [tensor.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        stack.extend(next_node for next_node, _ in node.next_functions)
    return len(seen)


HEAD = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    def networks():
        torch.manual_seed(0)
        generator = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 6))
        discriminator = nn.Sequential(nn.Linear(6, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))
        optimizer = torch.optim.SGD(discriminator.parameters(), lr=0.05)
        return generator, discriminator, optimizer


    def batches(count):
        torch.manual_seed(1)
        return iter([torch.randn(5, 6) for _ in range(count)])


    def hinge(real_logits, fake_logits):
        return (F.relu(1 - real_logits) + F.relu(1 + fake_logits)).mean()
""")

# ----- GigaGAN: a number summed, the loss divided by the accumulation count ---

NUMBER_OVER_COUNT = HEAD + textwrap.dedent("""

    def train_discriminator_step(generator, discriminator, optimizer, real_batches, grad_accum_every=1):
        total_divergence = 0.
        for _ in range(grad_accum_every):
            real = next(real_batches)
            with torch.no_grad():
                fake = generator(torch.randn(5, 4))
            divergence = hinge(discriminator(real), discriminator(fake))
            total_divergence += (divergence.item() / grad_accum_every)
            total_loss = divergence
            (total_loss / grad_accum_every).backward()
        optimizer.step()
        optimizer.zero_grad()
        return total_divergence
""")


def test_a_number_summed_over_the_accumulation_count_is_silent():
    assert _findings(NUMBER_OVER_COUNT) == []


def test_the_sum_is_a_number_that_holds_no_graph():
    namespace = _namespace(NUMBER_OVER_COUNT)
    generator, discriminator, optimizer = namespace["networks"]()
    total = namespace["train_discriminator_step"](generator, discriminator, optimizer,
                                                  namespace["batches"](4), grad_accum_every=4)
    assert type(total) is float


# ----- kept: the loss itself summed with its graph ----------------------------

LOSS_SUMMED = HEAD + textwrap.dedent("""

    def train_discriminator_step(generator, discriminator, optimizer, real_batches, grad_accum_every=1):
        total_divergence = 0.
        for _ in range(grad_accum_every):
            real = next(real_batches)
            with torch.no_grad():
                fake = generator(torch.randn(5, 4))
            divergence = hinge(discriminator(real), discriminator(fake))
            (divergence / grad_accum_every).backward()
            total_divergence += divergence
        optimizer.step()
        optimizer.zero_grad()
        return total_divergence
""")


def test_the_loss_summed_with_its_graph_is_still_found_and_grows():
    findings = _findings(LOSS_SUMMED)
    assert [(f.code, f.line) for f in findings] == [
        ("ADL023", _line_of(LOSS_SUMMED, "total_divergence += divergence"))]
    assert "`total_divergence` sums `divergence`" in findings[0].message
    namespace = _namespace(LOSS_SUMMED)
    sizes = []
    for steps in (2, 6):
        generator, discriminator, optimizer = namespace["networks"]()
        total = namespace["train_discriminator_step"](generator, discriminator, optimizer,
                                                      namespace["batches"](steps), grad_accum_every=steps)
        sizes.append(_autograd_nodes(total))
    assert sizes[1] > 2 * sizes[0] > 0


def test_the_help_applied_keeps_the_numbers_and_the_training():
    fixed, count = fix_source(LOSS_SUMMED, lambda t: lint_source(t, "set_w.py", ADL023), unsafe=True)
    assert count == 1 and "total_divergence += divergence.detach()" in fixed
    assert _findings(fixed) == []
    results = []
    for source in (LOSS_SUMMED, fixed):
        namespace = _namespace(source)
        generator, discriminator, optimizer = namespace["networks"]()
        total = namespace["train_discriminator_step"](generator, discriminator, optimizer,
                                                      namespace["batches"](3), grad_accum_every=3)
        results.append((total.detach(), [p.detach().clone() for p in discriminator.parameters()]))
    (total_b, params_b), (total_f, params_f) = results
    assert torch.equal(total_b, total_f)
    assert all(torch.equal(a, b) for a, b in zip(params_b, params_f))


# ----- kept: the loss as a divisor of a constant, and a product ---------------

LOSS_AS_DIVISOR = HEAD + textwrap.dedent("""

    def train_inverse(discriminator, optimizer, real_batches, steps):
        total = 0.
        for _ in range(steps):
            score = F.softplus(discriminator(next(real_batches))).mean() + 1.0
            optimizer.zero_grad()
            (1.0 / score).backward()
            optimizer.step()
            total += score
        return total
""")

LOSS_SCALED = HEAD + textwrap.dedent("""

    def train_scaled(discriminator, optimizer, real_batches, steps, scale=0.5):
        total = 0.
        for _ in range(steps):
            loss = F.softplus(discriminator(next(real_batches))).mean()
            optimizer.zero_grad()
            (loss * scale).backward()
            optimizer.step()
            total += loss
        return total
""")


def test_a_loss_that_is_the_divisor_of_a_constant_is_still_found():
    findings = _findings(LOSS_AS_DIVISOR)
    assert [(f.code, f.line) for f in findings] == [("ADL023", _line_of(LOSS_AS_DIVISOR, "total += score"))]
    namespace = _namespace(LOSS_AS_DIVISOR)
    _, discriminator, optimizer = namespace["networks"]()
    short = namespace["train_inverse"](discriminator, optimizer, namespace["batches"](2), 2)
    _, discriminator, optimizer = namespace["networks"]()
    long = namespace["train_inverse"](discriminator, optimizer, namespace["batches"](6), 6)
    assert _autograd_nodes(long) > 2 * _autograd_nodes(short) > 0


def test_a_scaled_loss_summed_is_still_found():
    findings = _findings(LOSS_SCALED)
    assert [(f.code, f.line) for f in findings] == [("ADL023", _line_of(LOSS_SCALED, "total += loss"))]
    namespace = _namespace(LOSS_SCALED)
    _, discriminator, optimizer = namespace["networks"]()
    total = namespace["train_scaled"](discriminator, optimizer, namespace["batches"](3), 3)
    assert total.grad_fn is not None
