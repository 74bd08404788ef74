"""Set V (docs/lint.md, twenty-fourth check).  The set's first run, with the
rules frozen at 34a4e10, had 1 false alarm; these tests keep its cause fixed
and the real form next to it, each claim run with torch:

* ADL023 on KD_Lib's deep mutual learning (https://github.com/SforAiDl/KD_Lib,
  `KD_Lib/KD/vision/DML/dml.py`, false): in the batch loop,
  `avg_student_loss = 0` starts a sum again, and `for i in range(num_students)`
  backpropagates each student's loss and adds it in; the batch's total is read
  with `.item()`.  The sum holds the graphs of one batch's students, released
  when it starts again: nothing grows with the batches.  The linter reported
  the students' loop as if it ran over data.  A loop that only picks the
  networks it calls (`cohort[i](x)`, `optimizers[i].step()`), inside a loop
  that starts the sum again before it, is now silent.
* Kept: the same students' sum started before the batch loop (it grows with
  the batches), a sum over the batches of an epoch started again in the epoch
  loop (KD_Lib's eight real lines, r420), and a loop over steps that draws its
  batch with `next(...)`: all reported, and the help applied keeps the
  logged numbers and the trained parameters."""

from __future__ import annotations

import textwrap

import torch

from autograd_doctor.lint import lint_source
from autograd_doctor.lint.engine import Selection
from autograd_doctor.lint.fixes import fix_source

ADL023 = Selection(("ADL023",))


def _findings(source: str):
    return [f for f in lint_source(source, "set_v.py") if f.code != "ADL000"]


def _namespace(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "set_v.py", "exec"), namespace)
    return namespace


def _line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def _fixed(source: str) -> str:
    text, count = fix_source(source, lambda t: lint_source(t, "set_v.py", ADL023), unsafe=True)
    assert count > 0
    return text


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


    def cohort(num_students=3):
        torch.manual_seed(0)
        students = [nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 3)) for _ in range(num_students)]
        optimizers = [torch.optim.SGD(s.parameters(), lr=0.1) for s in students]
        return students, optimizers


    def batches(count):
        torch.manual_seed(1)
        return [(torch.randn(8, 6), torch.randint(0, 3, (8,))) for _ in range(count)]
""")

# ----- deep mutual learning: a sum over the students of one batch -------------

MUTUAL_PER_BATCH = HEAD + textwrap.dedent("""

    def train_cohort(students, optimizers, loader, num_students):
        epoch_loss = 0.0
        last = None
        for data, label in loader:
            for optim in optimizers:
                optim.zero_grad()
            avg_student_loss = 0
            for i in range(num_students):
                student_loss = 0
                for j in range(num_students):
                    if i == j:
                        continue
                    student_loss += F.kl_div(F.log_softmax(students[i](data), dim=1),
                                             F.softmax(students[j](data), dim=1), reduction="batchmean")
                student_loss /= num_students - 1
                student_loss += F.cross_entropy(students[i](data), label)
                student_loss.backward()
                optimizers[i].step()
                avg_student_loss += student_loss
            avg_student_loss /= num_students
            epoch_loss += avg_student_loss.item()
            last = avg_student_loss
        return epoch_loss, last
""")


def test_a_sum_over_the_students_of_one_batch_is_silent():
    assert _findings(MUTUAL_PER_BATCH) == []


def test_the_per_batch_sum_holds_one_batch_of_graphs():
    """What makes it silent, checked: the total left after 4 batches and after 8
    links to the same number of autograd nodes (one batch's students)."""
    namespace = _namespace(MUTUAL_PER_BATCH)
    students, optimizers = namespace["cohort"]()
    _, after_four = namespace["train_cohort"](students, optimizers, namespace["batches"](4), 3)
    students, optimizers = namespace["cohort"]()
    _, after_eight = namespace["train_cohort"](students, optimizers, namespace["batches"](8), 3)
    assert _autograd_nodes(after_four) == _autograd_nodes(after_eight) > 0


# ----- kept: the students' sum started once, before the batch loop ------------

MUTUAL_ACROSS_BATCHES = HEAD + textwrap.dedent("""

    def train_cohort(students, optimizers, loader, num_students):
        avg_student_loss = 0
        for data, label in loader:
            for optim in optimizers:
                optim.zero_grad()
            for i in range(num_students):
                student_loss = 0
                for j in range(num_students):
                    if i == j:
                        continue
                    student_loss += F.kl_div(F.log_softmax(students[i](data), dim=1),
                                             F.softmax(students[j](data), dim=1), reduction="batchmean")
                student_loss /= num_students - 1
                student_loss += F.cross_entropy(students[i](data), label)
                student_loss.backward()
                optimizers[i].step()
                avg_student_loss += student_loss
        return avg_student_loss.item() / num_students, avg_student_loss
""")


def test_the_students_sum_across_batches_is_found_and_grows():
    findings = _findings(MUTUAL_ACROSS_BATCHES)
    assert [(f.code, f.line) for f in findings] == [
        ("ADL023", _line_of(MUTUAL_ACROSS_BATCHES, "avg_student_loss += student_loss"))]
    assert "`avg_student_loss` sums `student_loss`" in findings[0].message
    namespace = _namespace(MUTUAL_ACROSS_BATCHES)
    students, optimizers = namespace["cohort"]()
    _, after_four = namespace["train_cohort"](students, optimizers, namespace["batches"](4), 3)
    students, optimizers = namespace["cohort"]()
    _, after_eight = namespace["train_cohort"](students, optimizers, namespace["batches"](8), 3)
    assert _autograd_nodes(after_eight) > 1.8 * _autograd_nodes(after_four) > 0


def test_the_help_applied_keeps_the_numbers_and_the_training():
    fixed = _fixed(MUTUAL_ACROSS_BATCHES)
    assert "avg_student_loss += student_loss.detach()" in fixed
    assert [f for f in _findings(fixed) if f.code == "ADL023"] == []
    results = []
    for source in (MUTUAL_ACROSS_BATCHES, fixed):
        namespace = _namespace(source)
        students, optimizers = namespace["cohort"]()
        logged, total = namespace["train_cohort"](students, optimizers, namespace["batches"](5), 3)
        results.append((logged, total.detach(), [p.detach().clone() for s in students for p in s.parameters()]))
    (logged_b, total_b, params_b), (logged_f, total_f, params_f) = results
    assert logged_b == logged_f and torch.equal(total_b, total_f)
    assert all(torch.equal(a, b) for a, b in zip(params_b, params_f))


# ----- kept: a sum over an epoch's batches, started again in the epoch loop ---

EPOCH_SUM = HEAD + textwrap.dedent("""

    def train_student(student, optimizer, loader, epochs=2):
        loss_arr = []
        for ep in range(epochs):
            epoch_loss = 0.0
            for data, label in loader:
                loss = F.cross_entropy(student(data), label)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                epoch_loss += loss
            loss_arr.append(float(epoch_loss))
        return loss_arr
""")


def test_an_epoch_sum_started_again_in_the_epoch_loop_is_still_found():
    findings = [f for f in _findings(EPOCH_SUM) if f.code == "ADL023"]
    assert [f.line for f in findings] == [_line_of(EPOCH_SUM, "epoch_loss += loss")]


# ----- kept: a loop over steps that draws its batch with next() ---------------

STEP_SUM = HEAD + textwrap.dedent("""

    def train_steps(students, optimizers, loader, rounds=2, steps=3):
        for r in range(rounds):
            it = iter(loader)
            total = 0.0
            for step in range(steps):
                data, label = next(it)
                loss = F.cross_entropy(students[step % 2](data), label)
                optimizers[step % 2].zero_grad()
                loss.backward()
                optimizers[step % 2].step()
                total += loss
        return total
""")


def test_a_loop_that_draws_its_batches_with_next_is_still_found():
    findings = [f for f in _findings(STEP_SUM) if f.code == "ADL023"]
    assert [f.line for f in findings] == [_line_of(STEP_SUM, "total += loss")]
    namespace = _namespace(STEP_SUM)
    students, optimizers = namespace["cohort"](2)
    short = namespace["train_steps"](students, optimizers, namespace["batches"](8), steps=2)
    students, optimizers = namespace["cohort"](2)
    long = namespace["train_steps"](students, optimizers, namespace["batches"](8), steps=8)
    assert _autograd_nodes(long) > 2 * _autograd_nodes(short) > 0
