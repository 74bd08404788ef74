"""Losses kept through objects whose type only a caller or a constructor shows
(docs/lint.md, "Losses kept through objects a caller types").

* ADL023, a logger or meter handed in as a parameter of the function whose loop
  backpropagates the loss, its class shown by every call of the function in the
  file (`run = Run()`, then `train(model, batches, run)`; r434, wandb's run logger),
  its method keeping what it is given (`self.history.append(dict(row))`), the loss
  handed in a dict or list display (`run.log({"loss": loss})`).
* ADL023, a meter held on `self`, built by the class's own constructor calls
  (`self.losses = AverageMeter([...])` in `__init__`), handed the loss (or parts of
  it with a graph of their own, by the file's interpreter of returned graphs) in a
  method that backpropagates and that a loop of the file calls on every iteration;
  the meter's method adds each element of a list into an item of an attribute
  (`for idx, v in enumerate(values): self._sum[idx] += v`; r422, SpareNet).

Each cause: the plain form and fresh shapes (written before the rule was run on
them), buggy -> a finding at the line with its help, correct near twins silent,
and the help applied run with torch: the same values and parameters, no graph
kept."""

from __future__ import annotations

import textwrap

import torch

from autograd_doctor.lint import lint_source


def _line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def _twin(source: str, old: str, new: str) -> str:
    assert source.count(old) == 1, old
    return source.replace(old, new)


def _found(source: str, name: str = "kept.py"):
    return [(f.line, f.code, f.message) for f in lint_source(source, name) if f.code == "ADL023"]


def _lines(source: str):
    return [(line, code) for line, code, _ in _found(source)]


# ----- an object handed in as a parameter, typed by the callers ------------------

LOGGER = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Run:
        def __init__(self):
            self.history = []

        def log(self, row):
            self.history.append(dict(row))


    def train(model, batches, run):
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for x, y in batches:
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
            run.log({"loss": loss})


    def main(model, batches):
        run = Run()
        train(model, batches, run)
        return run
""")

# fresh shape: the constructor written in the call, a sum into the object, a `while` loop
RECORDER = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Recorder:
        def __init__(self):
            self.total = 0.0

        def record(self, value):
            self.total = self.total + value


    def fit(net, data, rec, steps):
        opt = torch.optim.Adam(net.parameters(), lr=1e-2)
        step = 0
        while step < steps:
            x, y = data[step % len(data)]
            opt.zero_grad()
            err = nn.functional.l1_loss(net(x), y)
            err.backward()
            opt.step()
            rec.record(err * x.size(0))
            step += 1
        return rec


    def run(net, data):
        return fit(net, data, Recorder(), 4)
""")

# fresh shape: the object handed by keyword, the loss in a list display, appended as is
HISTORY = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class History:
        def __init__(self):
            self.rows = []

        def add(self, values):
            self.rows.append(values)


    def epoch(model, loader, opt, history=None):
        for inputs, targets in loader:
            opt.zero_grad()
            out = model(inputs)
            loss_value = nn.functional.cross_entropy(out, targets)
            loss_value.backward()
            opt.step()
            history.add([loss_value, inputs.size(0)])


    def go(model, loader, opt):
        history = History()
        epoch(model, loader, opt, history=history)
        return history
""")


def test_logger_typed_by_the_caller():
    found = _found(LOGGER)
    line = _line_of(LOGGER, 'run.log({"loss": loss})')
    assert [f[0] for f in found] == [line]
    message = found[0][2]
    assert "`run.log()` keeps `loss`" in message
    assert "an object the caller builds (`Run()`) and hands in" in message
    assert "hand it `loss.item()`" in message


def test_fresh_shapes_constructor_in_the_call_and_a_keyword():
    assert _lines(RECORDER) == [(_line_of(RECORDER, "rec.record(err * x.size(0))"), "ADL023")]
    assert _lines(HISTORY) == [(_line_of(HISTORY, "history.add([loss_value"), "ADL023")]


def test_logger_near_twins_silent():
    line = 'run.log({"loss": loss'
    for twin in (
        _twin(LOGGER, 'run.log({"loss": loss})', 'run.log({"loss": loss.item()})'),
        _twin(LOGGER, "self.history.append(dict(row))",
              "self.history.append({k: float(v) for k, v in row.items()})"),
        # a second caller hands in something else: the type is unknown
        LOGGER + "\n\ndef other(model, batches, run):\n    train(model, batches, run)\n",
        # two callers, two classes
        LOGGER + "\n\nclass Quiet:\n    def log(self, row):\n        pass\n\n\n"
                 "def quiet(model, batches):\n    train(model, batches, Quiet())\n",
        # the function also used as a value: called from anywhere
        LOGGER + "\n\nHOOKS = [train]\n",
        # the object built again in the loop
        _twin(LOGGER, "run.log({\"loss\": loss})", "run = Run()\n        run.log({\"loss\": loss})"),
    ):
        assert not any(f[0] == _line_of(twin, line) for f in _found(twin)), twin
    # no caller at all: nothing shows the type
    alone = LOGGER.split("def main(")[0]
    assert _found(alone) == []


def test_logger_claim_runs_with_torch():
    results = []
    fixed = _twin(LOGGER, 'run.log({"loss": loss})', 'run.log({"loss": loss.detach()})')
    for source in (LOGGER, fixed):
        namespace: dict = {}
        exec(compile(source, "kept.py", "exec"), namespace)
        torch.manual_seed(0)
        model = torch.nn.Linear(3, 1)
        batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)]
        run = namespace["main"](model, batches)
        results.append(([row["loss"] for row in run.history], [p.detach().clone() for p in model.parameters()]))
    (kept, params), (clean, clean_params) = results
    assert all(v.grad_fn is not None for v in kept) and all(v.grad_fn is None for v in clean)
    assert all(torch.equal(a.detach(), b) for a, b in zip(kept, clean))
    assert all(torch.equal(a, b) for a, b in zip(params, clean_params))


# ----- a meter held on self, built by the class's own constructor ------------------

RUNNER = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class AverageMeter:
        def __init__(self, items=None):
            self.n_items = 1 if items is None else len(items)
            self.reset()

        def reset(self):
            self._sum = [0] * self.n_items
            self._count = [0] * self.n_items

        def update(self, values):
            if isinstance(values, list):
                for idx, v in enumerate(values):
                    self._sum[idx] += v
                    self._count[idx] += 1
            else:
                self._sum[0] += values
                self._count[0] += 1


    class Runner:
        def __init__(self):
            self.net = nn.Linear(3, 3)
            self.optimizer = torch.optim.SGD(self.net.parameters(), lr=0.1)
            self.losses = AverageMeter(["A", "B"])

        def compute(self, data):
            out = self.net(data["x"])
            loss_a = (out - data["y"]).pow(2).mean()
            loss_b = out.abs().mean()
            return loss_a + loss_b, loss_a, loss_b

        def train_step(self, data):
            total, loss_a, loss_b = self.compute(data)
            self.optimizer.zero_grad()
            total.backward()
            self.optimizer.step()
            self.losses.update([loss_a * 10, loss_b * 10])

        def train(self, loader):
            for data in loader:
                self.train_step(data)
""")

# fresh shape: the backpropagated loss itself, a plain sum meter, a `while` loop
SUMMER = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class RunningSum:
        def __init__(self):
            self.sum = 0.0
            self.n = 0

        def add(self, v, n=1):
            self.sum += v * n
            self.n += n


    class Learner:
        def __init__(self, model):
            self.model = model
            self.opt = torch.optim.SGD(model.parameters(), lr=0.05)
            self.meter = RunningSum()

        def step(self, x, y):
            self.opt.zero_grad()
            objective = nn.functional.mse_loss(self.model(x), y)
            objective.backward()
            self.opt.step()
            self.meter.add(objective, x.size(0))

        def fit(self, batches):
            i = 0
            while i < len(batches):
                self.step(*batches[i])
                i += 1
""")

# fresh shape: a tuple of parts handed to a meter that adds each element, no isinstance
PARTS = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class PairMeter:
        def __init__(self):
            self.totals = [0.0, 0.0]

        def push(self, pair):
            for i, v in enumerate(pair):
                self.totals[i] += v


    class Trainer:
        def __init__(self):
            self.encoder = nn.Linear(4, 2)
            self.opt = torch.optim.SGD(self.encoder.parameters(), lr=0.1)
            self.pair = PairMeter()

        def one_batch(self, x, y):
            z = self.encoder(x)
            rec = nn.functional.mse_loss(z, y)
            reg = z.pow(2).mean()
            loss = rec + 0.1 * reg
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            self.pair.push((rec, reg))

        def epoch(self, batches):
            for x, y in batches:
                self.one_batch(x, y)
""")


def test_meter_on_self_fed_parts_of_the_loss():
    found = _found(RUNNER)
    line = _line_of(RUNNER, "self.losses.update([loss_a * 10")
    assert [f[0] for f in found] == [line]
    message = found[0][2]
    assert "`self.losses.update()` keeps `loss_a` and `loss_b`" in message
    assert "`AverageMeter` that `self.losses` holds" in message
    assert "`self._sum`" in message
    assert "hand it `loss_a.item()` and `loss_b.item()`" in message


def test_fresh_shapes_plain_meter_and_a_tuple_of_parts():
    assert _lines(SUMMER) == [(_line_of(SUMMER, "self.meter.add(objective"), "ADL023")]
    assert _lines(PARTS) == [(_line_of(PARTS, "self.pair.push((rec, reg))"), "ADL023")]


def test_meter_on_self_near_twins_silent():
    line = "self.losses.update(["
    for twin in (
        _twin(RUNNER, "self.losses.update([loss_a * 10, loss_b * 10])",
              "self.losses.update([loss_a.item() * 10, loss_b.item() * 10])"),
        # the method starts the meter again
        _twin(RUNNER, "self.losses.update([", "self.losses.reset()\n        self.losses.update(["),
        # the loop builds it again
        _twin(RUNNER, "self.train_step(data)", "self.losses = AverageMeter([\"A\", \"B\"])\n"
                                                "            self.train_step(data)"),
        # two classes bound to the attribute
        _twin(RUNNER, "def train(self, loader):",
              "def quiet(self):\n        self.losses = object()\n\n    def train(self, loader):"),
        # no loop calls the method
        _twin(RUNNER, "for data in loader:\n            self.train_step(data)", "self.train_step(loader)"),
        # the meter keeps only a count of what it is given
        _twin(RUNNER, "self._sum[idx] += v", "self._sum[idx] += 1"),
    ):
        assert not any(f[0] == _line_of(twin, line) for f in _found(twin)), twin
    # a value with no known graph (a function of another module) is no evidence: only
    # `rec` is named, and with neither part known, nothing is reported
    unknown = _twin(PARTS, "reg = z.pow(2).mean()", "reg = elsewhere.penalty(x)")
    found = [f for f in _found(unknown) if f[0] == _line_of(unknown, "self.pair.push(")]
    assert len(found) == 1 and "keeps `rec`, which carries" in found[0][2] and "`reg`" not in found[0][2]
    neither = _twin(unknown, "rec = nn.functional.mse_loss(z, y)", "rec = elsewhere.fit(x, y)")
    assert not any(f[0] == _line_of(neither, "self.pair.push(") for f in _found(neither))
    plain = _twin(SUMMER, "self.meter.add(objective, x.size(0))", "self.meter.add(objective.item(), x.size(0))")
    assert _found(plain) == []


def test_meter_on_self_claim_runs_with_torch():
    fixed = _twin(RUNNER, "self.losses.update([loss_a * 10, loss_b * 10])",
                  "self.losses.update([loss_a.detach() * 10, loss_b.detach() * 10])")
    results = []
    for source in (RUNNER, fixed):
        namespace: dict = {}
        exec(compile(source, "kept.py", "exec"), namespace)
        torch.manual_seed(0)
        runner = namespace["Runner"]()
        runner.train([{"x": torch.randn(4, 3), "y": torch.randn(4, 3)} for _ in range(3)])
        results.append((runner.losses._sum, [p.detach().clone() for p in runner.net.parameters()]))
    (kept, params), (clean, clean_params) = results
    assert all(s.grad_fn is not None for s in kept) and all(s.grad_fn is None for s in clean)
    assert all(torch.equal(a.detach(), b) for a, b in zip(kept, clean))
    assert all(torch.equal(a, b) for a, b in zip(params, clean_params))
