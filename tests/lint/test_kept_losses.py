"""Losses kept through objects and other files (docs/lint.md, "Losses kept through
objects and other files, 8 December").

* ADL023, a method that keeps its backpropagated loss in an attribute of `self`,
  called on every iteration of a loop in *another* file of the repository that
  names the method's class (FedML's decentralized `client_dsgd.py`, whose loop is
  in `decentralized_fl_api.py`; r512's real form).
* ADL023, a meter whose method adds what it is given into an attribute
  (`self.sum += val * n`), handed a value that adds up a list of the loop's
  backpropagated losses: `sum(L) / len(L)`, `torch.stack(L).mean()`, or a function
  of the file that returns so of its parameter (`list_mean(loss_of_subnets)`,
  once-for-all's progressive shrinking; r511's meter line).

Each cause: the plain form and fresh shapes (written before the rule was run on
them), buggy -> a finding at the line, correct near twins silent, and the claim
run with torch."""

from __future__ import annotations

import textwrap

import torch

from autograd_doctor.lint import lint_source


def _line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def _twin(source: str, old: str, new: str) -> str:
    assert source.count(old) == 1, old
    return source.replace(old, new)


# ----- a method keeping a loss on self, its loop in another file -------------------

CLIENT = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class OnlineClient:
        def __init__(self, samples):
            self.samples = samples
            self.model = nn.Linear(3, 1)
            self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.05)
            self.loss_in_each_iteration = []

        def train_local(self, t):
            self.optimizer.zero_grad()
            x, y = self.samples[t % len(self.samples)]
            loss = nn.functional.mse_loss(self.model(x), y)
            loss.backward()
            self.optimizer.step()
            self.loss_in_each_iteration.append(loss)

        def reset(self):
            self.loss_in_each_iteration = []
""")

SIMULATION = textwrap.dedent("""
    from clients import OnlineClient


    def simulate(samples, rounds):
        clients = [OnlineClient(samples) for _ in range(2)]
        for t in range(rounds):
            for client in clients:
                client.train_local(t)
        return clients
""")

# a fresh shape: a sum into an attribute, a `while` loop in a runner that builds the class
WORKER = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Worker:
        def __init__(self):
            self.net = nn.Linear(4, 2)
            self.opt = torch.optim.Adam(self.net.parameters())
            self.total_loss = 0.0

        def step(self, batch):
            x, y = batch
            self.opt.zero_grad()
            loss = nn.functional.cross_entropy(self.net(x), y)
            loss.backward()
            self.opt.step()
            self.total_loss += loss
""")

RUNNER = textwrap.dedent("""
    import worker as w


    def run(batches):
        worker = w.Worker()
        i = 0
        while i < len(batches):
            worker.step(batches[i])
            i += 1
        return worker
""")


def _repository(tmp_path, files: dict) -> None:
    (tmp_path / "setup.py").write_text("")
    for name, text in files.items():
        (tmp_path / name).write_text(text)


def _lint(tmp_path, name: str, text: str):
    return [(f.line, f.code, f.message) for f in lint_source(text, str(tmp_path / name))]


def test_loop_in_another_file_that_names_the_class(tmp_path):
    _repository(tmp_path, {"clients.py": CLIENT, "sim.py": SIMULATION})
    found = _lint(tmp_path, "clients.py", CLIENT)
    line = _line_of(CLIENT, "self.loss_in_each_iteration.append(loss)")
    assert [(f[0], f[1]) for f in found] == [(line, "ADL023")]
    assert "runs on every iteration of a loop of `sim.py`" in found[0][2]
    assert "append `loss.item()`" in found[0][2]


def test_fresh_shape_sum_into_attribute_while_loop_in_runner(tmp_path):
    _repository(tmp_path, {"worker.py": WORKER, "runner.py": RUNNER})
    found = _lint(tmp_path, "worker.py", WORKER)
    assert [(f[0], f[1]) for f in found] == [(_line_of(WORKER, "self.total_loss += loss"), "ADL023")]
    assert "`runner.py`" in found[0][2]


def test_other_file_not_naming_the_class_is_no_evidence(tmp_path):
    other = SIMULATION.replace("from clients import OnlineClient\n", "").replace(
        "OnlineClient(samples)", "make(samples)")
    _repository(tmp_path, {"clients.py": CLIENT, "sim.py": other})
    assert _lint(tmp_path, "clients.py", CLIENT) == []


def test_near_twins_silent(tmp_path):
    # the help applied
    fixed = _twin(CLIENT, "append(loss)", "append(loss.item())")
    _repository(tmp_path, {"clients.py": fixed, "sim.py": SIMULATION})
    assert _lint(tmp_path, "clients.py", fixed) == []
    # the loop that calls it also calls the method that binds the list again
    resets = _twin(SIMULATION, "client.train_local(t)", "client.reset()\n            client.train_local(t)")
    sub = tmp_path / "b"
    sub.mkdir()
    _repository(sub, {"clients.py": CLIENT, "sim.py": resets})
    assert _lint(sub, "clients.py", CLIENT) == []
    # no loop anywhere calls it
    once = _twin(SIMULATION, "for client in clients:\n            client.train_local(t)", "pass")
    sub = tmp_path / "c"
    sub.mkdir()
    _repository(sub, {"clients.py": CLIENT, "sim.py": once})
    assert _lint(sub, "clients.py", CLIENT) == []


def test_claim_the_list_keeps_every_graph_and_the_fix_keeps_numbers():
    torch.manual_seed(0)
    samples = [(torch.randn(1, 3), torch.randn(1, 1)) for _ in range(3)]
    results = []
    for source in (CLIENT, _twin(CLIENT, "append(loss)", "append(loss.item())")):
        namespace: dict = {}
        exec(compile(source, "clients.py", "exec"), namespace)
        torch.manual_seed(1)
        client = namespace["OnlineClient"](samples)
        for t in range(3):
            client.train_local(t)
        results.append(client.loss_in_each_iteration)
    kept, fixed = results
    assert all(v.grad_fn is not None for v in kept)
    assert all(isinstance(v, float) for v in fixed)
    assert [v.item() for v in kept] == fixed  # same values, bit for bit


# ----- a meter handed the sum of a list of backpropagated losses -------------------

METER = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class AverageMeter:
        def __init__(self):
            self.sum = 0
            self.count = 0

        def update(self, val, n=1):
            self.sum += val * n
            self.count += n


    def list_mean(values):
        return sum(values) / len(values)


    def train_one_epoch(net, optimizer, batches, subnets=2):
        losses = AverageMeter()
        for images, labels in batches:
            net.zero_grad()
            loss_of_subnets = []
            for _ in range(subnets):
                loss = F.cross_entropy(net(images), labels)
                loss_of_subnets.append(loss)
                loss.backward()
            optimizer.step()
            losses.update(list_mean(loss_of_subnets), images.size(0))
        return losses
""")

# fresh shapes: the reduction written in the loop; a tracker whose method sums with `=`
DIRECT = _twin(METER, "losses.update(list_mean(loss_of_subnets), images.size(0))",
               "losses.update(sum(loss_of_subnets) / len(loss_of_subnets), images.size(0))")

TRACKER = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Tracker:
        def __init__(self):
            self.total = 0.0
            self.steps = 0

        def add(self, value):
            self.total = self.total + value
            self.steps += 1


    def fit(model, opt, loader, heads):
        tracker = Tracker()
        for x, y in loader:
            step_losses = []
            opt.zero_grad()
            for head in heads:
                head_loss = nn.functional.mse_loss(head(model(x)), y)
                head_loss.backward()
                step_losses.append(head_loss)
            opt.step()
            tracker.add(torch.stack(step_losses).mean())
        return tracker
""")


def _found(source: str, name: str = "kept.py"):
    return [(f.line, f.code) for f in lint_source(source, name)]


def test_meter_fed_a_reduced_list_of_losses():
    found = _found(METER)
    assert (_line_of(METER, "losses.update(list_mean"), "ADL023") in found
    message = next(f.message for f in lint_source(METER, "kept.py")
                   if f.line == _line_of(METER, "losses.update(list_mean"))
    assert "keeps `list_mean(loss_of_subnets)`, which adds up `loss`" in message
    assert "`self.sum`" in message


def test_fresh_shapes_reduction_in_the_loop_and_a_tracker():
    assert (_line_of(DIRECT, "losses.update(sum("), "ADL023") in _found(DIRECT)
    assert (_line_of(TRACKER, "tracker.add("), "ADL023") in _found(TRACKER)


def test_meter_near_twins_silent():
    meter_line = "losses.update(list_mean"
    for twin in (
        _twin(METER, "loss_of_subnets.append(loss)", "loss_of_subnets.append(loss.item())"),
        _twin(METER, "losses.update(list_mean(loss_of_subnets), images.size(0))",
              "losses.update(list_mean(loss_of_subnets).item(), images.size(0))"),
        _twin(METER, "return sum(values) / len(values)", "return sum(v.item() for v in values) / len(values)"),
        _twin(METER, "    losses = AverageMeter()\n    for images, labels in batches:\n",
              "    for images, labels in batches:\n        losses = AverageMeter()\n"),
    ):
        assert not any(line == _line_of(twin, meter_line) for line, _ in _found(twin)), twin
    fixed = _twin(TRACKER, "tracker.add(torch.stack(step_losses).mean())",
                  "tracker.add(torch.stack(step_losses).mean().item())")
    assert not any(line == _line_of(fixed, "tracker.add(") for line, _ in _found(fixed))


def test_meter_claim_runs_with_torch():
    results = []
    for source in (METER, _twin(METER, "losses.update(list_mean(loss_of_subnets), images.size(0))",
                                "losses.update(list_mean(loss_of_subnets).detach(), images.size(0))")):
        namespace: dict = {}
        exec(compile(source, "kept.py", "exec"), namespace)
        torch.manual_seed(0)
        net = torch.nn.Linear(5, 3)
        optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
        batches = [(torch.randn(4, 5), torch.randint(0, 3, (4,))) for _ in range(3)]
        meter = namespace["train_one_epoch"](net, optimizer, batches)
        results.append((meter.sum, [p.detach().clone() for p in net.parameters()]))
    (kept, params), (fixed, fixed_params) = results
    assert kept.grad_fn is not None and fixed.grad_fn is None
    assert torch.equal(kept.detach(), fixed)
    assert all(torch.equal(a, b) for a, b in zip(params, fixed_params))
