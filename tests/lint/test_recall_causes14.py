"""Recall causes of r596-r605 (docs/lint.md, "A twenty-fifth held-out set,
measured once (r596-r605)" and "Recall causes worked on (r596-r605)").

* ADL036 (r604, r597; the cause of r605 and of r596's failure too): a NumPy
  conversion (`.numpy()`, `np.asarray`, `np.array`) of a tensor that requires
  grad, in a function that runs a backward pass or a step (so gradients are on),
  or in a same-file helper that such a function passes the tensor to (directly
  or handed on through another helper's parameter).

Fresh shapes (written and run under torch before the rule ran on them): a `fit`
loop keeping `loss.cpu().numpy()`; a trainer passing its loss by keyword to
`log_metrics`, which hands it to `to_np`'s `np.array`; a learner calling
`self.meter.update(loss)` with `self.meter = Meter()`.  Buggy -> the finding at
its line with its help; the help applied (the rule's fix) -> runs and keeps the
same values as a hand-written version; correct near twins silent."""

from __future__ import annotations

import textwrap

import torch

from autograd_doctor.lint import lint_source
from autograd_doctor.lint.fixes import apply_edits


def _line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def _found(source: str, code: str = "ADL036"):
    return [f for f in lint_source(source, "prog.py") if f.code == code]


def _run(source: str):
    namespace: dict = {}
    exec(compile(source, "<prog>", "exec"), namespace)
    return namespace["run"]()


INLINE = """\
import torch
import torch.nn as nn
import torch.nn.functional as F


def fit(xs, ys, epochs=3):
    model = nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    history = []
    for _ in range(epochs):
        loss = F.mse_loss(model(xs), ys)
        opt.zero_grad()
        loss.backward()
        opt.step()
        history.append(loss.cpu().numpy())
    return history


def run():
    torch.manual_seed(0)
    return fit(torch.randn(8, 3), torch.randn(8, 1))
"""

CHAIN = """\
import numpy as np
import torch
import torch.nn as nn


def to_np(t):
    return np.array(t)


def log_metrics(step, value, sink):
    sink.append((step, to_np(value)))


class Trainer:
    def __init__(self):
        self.net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
        self.opt = torch.optim.Adam(self.net.parameters(), lr=1e-2)
        self.sink = []

    def step(self, i, x, target):
        out = self.net(x)
        loss = ((out - target) ** 2).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        log_metrics(i, value=loss, sink=self.sink)


def run():
    torch.manual_seed(0)
    tr = Trainer()
    for i in range(2):
        tr.step(i, torch.randn(5, 4), torch.randn(5, 2))
    return tr.sink
"""

TWIN_DETACHED = """\
import torch
import torch.nn as nn
import torch.nn.functional as F


def fit(xs, ys, epochs=3):
    model = nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    history = []
    for _ in range(epochs):
        loss = F.mse_loss(model(xs), ys)
        opt.zero_grad()
        loss.backward()
        opt.step()
        history.append(loss.detach().cpu().numpy())
        history.append(loss.data.numpy())
    return history


def run():
    torch.manual_seed(0)
    return fit(torch.randn(8, 3), torch.randn(8, 1))
"""

TWIN_NO_GRAD_CALLER = """\
import numpy as np
import torch
import torch.nn as nn


def to_np(t):
    return np.asarray(t)


def evaluate(net, x):
    return net(x).numpy()


class Trainer:
    def __init__(self):
        self.net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
        self.opt = torch.optim.Adam(self.net.parameters(), lr=1e-2)
        self.sink = []

    def step(self, x, target):
        out = self.net(x)
        loss = ((out - target) ** 2).mean()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        with torch.no_grad():
            self.sink.append(to_np(self.net(x)))
            self.sink.append(evaluate(self.net, x))
        self.sink.append(to_np(loss.detach()))
        self.sink.append(to_np(target))


def run():
    torch.manual_seed(0)
    tr = Trainer()
    tr.step(torch.randn(5, 4), torch.randn(5, 2))
    return tr.sink
"""

TWIN_EVAL_ONLY = """\
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, x):
        return self.fc(x)

    def predict(self, x):
        return self.fc(x).cpu().numpy()


def run():
    m = Model()
    with torch.no_grad():
        return m.predict(torch.randn(4, 3))
"""


HELD = """\
import torch
import torch.nn as nn


class Meter:
    def __init__(self):
        self.values = []

    def update(self, value, n=1):
        self.values.append((value.numpy(), n))


class Learner:
    def __init__(self, net):
        self.net = net
        self.opt = torch.optim.SGD(net.parameters(), lr=0.05)
        self.meter = Meter()

    def train_batch(self, x, y):
        loss = nn.functional.cross_entropy(self.net(x), y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.meter.update(loss, n=x.shape[0])


def run():
    torch.manual_seed(0)
    learner = Learner(nn.Linear(6, 3))
    learner.train_batch(torch.randn(4, 6), torch.randint(0, 3, (4,)))
    return learner.meter.values
"""

TWIN_HELD = """\
import torch
import torch.nn as nn


class Meter:
    def __init__(self):
        self.values = []

    def update(self, value, n=1):
        self.values.append((value.numpy(), n))


class Printer:
    def update(self, value, n=1):
        print(value, n)


class Learner:
    def __init__(self, net, meter):
        self.net = net
        self.opt = torch.optim.SGD(net.parameters(), lr=0.05)
        self.meter = meter

    def train_batch(self, x, y):
        loss = nn.functional.cross_entropy(self.net(x), y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.meter.update(loss, n=x.shape[0])
        self.stats.update(loss.detach(), n=1)


def run():
    torch.manual_seed(0)
    learner = Learner(nn.Linear(6, 3), Printer())
    learner.stats = Meter()
    learner.train_batch(torch.randn(4, 6), torch.randint(0, 3, (4,)))
    return learner.stats.values
"""


def test_numpy_of_the_loss_in_the_training_loop_is_found_and_the_fix_keeps_the_values():
    findings = _found(INLINE)
    assert [f.line for f in findings] == [_line_of(INLINE, "history.append(loss.cpu().numpy())")]
    assert "`.numpy()` of a tensor that requires grad raises: `loss` requires grad here" in findings[0].message
    assert "convert `loss.detach()` instead" in findings[0].message
    try:
        _run(INLINE)
    except RuntimeError as e:
        assert "requires grad" in str(e)
    else:
        raise AssertionError("the buggy program should fail")
    fixed, n = apply_edits(INLINE, findings, unsafe=True)
    assert n == 1 and "loss.detach().cpu().numpy()" in fixed
    got = _run(fixed)
    torch.manual_seed(0)
    xs, ys = torch.randn(8, 3), torch.randn(8, 1)
    model = torch.nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    want = []
    for _ in range(3):
        loss = torch.nn.functional.mse_loss(model(xs), ys)
        opt.zero_grad()
        loss.backward()
        opt.step()
        want.append(loss.item())
    assert [float(v) for v in got] == want
    assert not _found(fixed)


def test_a_loss_handed_through_two_helpers_to_np_array_is_found():
    findings = _found(CHAIN)
    assert [f.line for f in findings] == [_line_of(CHAIN, "return np.array(t)")]
    message = findings[0].message
    assert "`np.array()` of a tensor that requires grad raises" in message
    assert f"line {_line_of(CHAIN, 'log_metrics(i, value=loss')} passes `loss`" in message
    assert "to `log_metrics()` with gradients on" in message
    fixed, n = apply_edits(CHAIN, findings, unsafe=True)
    assert n == 1 and "np.array(t.detach())" in fixed
    sink = _run(fixed)
    assert [s for s, _ in sink] == [0, 1] and all(v.shape == () for _, v in sink)
    assert not _found(fixed)


def test_correct_near_twins_are_silent():
    # detached / `.data` conversions; conversions under no_grad or of detached values;
    # a module's predict() converting its output, called under no_grad, no backward in the file
    for source in (TWIN_DETACHED, TWIN_NO_GRAD_CALLER, TWIN_EVAL_ONLY):
        _run(source)  # runs
        assert not _found(source)


def test_a_graph_value_passed_only_under_no_grad_or_a_helper_called_from_code_without_backward_is_silent():
    source = textwrap.dedent("""
        import numpy as np
        import torch
        import torch.nn as nn


        def show(values):
            return np.asarray(values)


        def report(net, x):
            return show(net(x))      # no backward, no step here: gradients may well be off


        def train(net, x):
            opt = torch.optim.SGD(net.parameters(), lr=0.1)
            loss = net(x).sum()
            loss.backward()
            opt.step()
            with torch.no_grad():
                show(net(x))
    """)
    assert not _found(source)


def test_a_loss_handed_to_a_method_of_an_object_the_class_holds_is_found():
    # `self.meter = Meter()`: the held object's class is the file's only definer of `update`
    findings = _found(HELD)
    assert [f.line for f in findings] == [_line_of(HELD, "value.numpy()")]
    assert f"line {_line_of(HELD, 'self.meter.update(loss')} passes `loss`" in findings[0].message
    assert "to `self.meter.update()` with gradients on" in findings[0].message
    fixed, n = apply_edits(HELD, findings, unsafe=True)
    assert n == 1 and "value.detach().numpy()" in fixed
    values = _run(fixed)
    assert len(values) == 1 and values[0][1] == 4
    assert not _found(fixed)


def test_a_held_object_of_unknown_class_is_silent():
    # `self.meter = meter` filled with a `Printer()`; two classes define `update`;
    # `self.stats` is never assigned in the class
    _run(TWIN_HELD)
    assert not _found(TWIN_HELD)


def test_a_gradient_converted_after_backward_is_silent():
    # FedML's `x_grad = x.grad.numpy()` (set AA's first precision run): a gradient
    # requires grad only under create_graph=True
    source = textwrap.dedent("""
        import torch
        import torch.nn as nn


        def step(x, grads):
            net = nn.Linear(3, 1)
            x = torch.tensor(x, requires_grad=True)
            out = net(x)
            out.backward(gradient=grads)
            a = x.grad.numpy()
            g = torch.autograd.grad(net(x).sum(), x)[0]
            b = g.numpy()
            return a, b
    """)
    assert not _found(source)
