"""Causes left open by r422-r470 (docs/lint.md, "Recall causes worked on, 7 December (r422-r470)").

* ADL023, a loss kept by an attribute of the object whose method
  backpropagates it (`self.running += loss`, `self.running.add_(loss.cpu() *
  n)`, `self.losses.append(loss)`), the method called on every iteration of a
  loop of the file: the attribute outlives the call, so it keeps the graph of
  every call (TorchFusion's learner, r465).
* ADL023, every entry of a loss dictionary summed into a dictionary of totals
  under the key the loop iterates (`for key in loss: totals[key] +=
  loss[key]`, `.keys()`, `.items()`), the dictionary whose entry the loop
  backpropagates (`loss["total"].backward()`): the iteration reaches that
  entry, so the totals keep its graph (SSA-SC, r459).
* ADL023, a loss moved or cast before it is summed (`loss.cpu()`,
  `loss.float()`): the result keeps the graph.

Each cause: the plain form and two fresh programs in other shapes (written
before the rule was run on them), buggy -> a finding at the line, its near
twins (`.item()`, `.detach()`, `float(...)`) silent, and the claim run with
torch against a hand-written reference."""

from __future__ import annotations

import textwrap

import pytest
import torch

from autograd_doctor.lint import lint_source
from autograd_doctor.lint.fixes import apply_edits


def _codes(source: str) -> list[tuple[int, str]]:
    return [(f.line, f.code) for f in lint_source(source, "causes9.py")]


def _namespace(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "causes9.py", "exec"), namespace)
    return namespace


def _line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def _twin(source: str, old: str, new: str) -> str:
    assert source.count(old) == 1, old
    return source.replace(old, new)


# ----- ADL023: a loss kept by an attribute of the training object ------------------

ATTRIBUTE_SUM = textwrap.dedent("""
    import torch
    import torch.nn.functional as F


    class Trainer:
        def __init__(self, model, optimizer):
            self.model = model
            self.optimizer = optimizer
            self.epoch_loss = torch.zeros(())

        def train_batch(self, x, y):
            self.optimizer.zero_grad()
            loss = F.mse_loss(self.model(x), y)
            loss.backward()
            self.optimizer.step()
            self.epoch_loss += loss

        def fit(self, batches):
            for x, y in batches:
                self.train_batch(x, y)
            return self.epoch_loss
    """)
ATTRIBUTE_SUM_LINE = "self.epoch_loss += loss"

# fresh 1: an in-place `add_` of the loss moved to the CPU and scaled, the
# method called from a function's loop on an object handed in
ATTRIBUTE_ADD_ = textwrap.dedent("""
    import torch


    class Learner:
        def __init__(self, net, lr=0.1):
            self.net = net
            self.opt = torch.optim.SGD(net.parameters(), lr=lr)
            self.seen = torch.tensor(0.0)

        def learn(self, x, y):
            out = self.net(x)
            err = ((out - y) ** 2).mean()
            self.opt.zero_grad()
            err.backward()
            self.opt.step()
            self.seen.add_(err.cpu() * x.shape[0])
            return out


    def run(learner, data):
        for x, y in data:
            learner.learn(x, y)
        return learner.seen
    """)
ATTRIBUTE_ADD_LINE = "self.seen.add_(err.cpu() * x.shape[0])"

# fresh 2: a policy-gradient agent that appends its loss to a list it holds,
# updated from a `while` loop of the same class
ATTRIBUTE_APPEND = textwrap.dedent("""
    import torch


    class Agent:
        def __init__(self, policy, optimizer):
            self.policy = policy
            self.optimizer = optimizer
            self.losses = []

        def update(self, states, returns):
            log_probs = self.policy(states).log_softmax(-1)[:, 0]
            policy_loss = -(log_probs * returns).mean()
            self.optimizer.zero_grad()
            policy_loss.backward()
            self.optimizer.step()
            self.losses.append(policy_loss)

        def train(self, episodes):
            done = 0
            while done < len(episodes):
                states, returns = episodes[done]
                self.update(states, returns)
                done += 1
            return self.losses
    """)
ATTRIBUTE_APPEND_LINE = "self.losses.append(policy_loss)"


@pytest.mark.parametrize("source, line", [
    (ATTRIBUTE_SUM, ATTRIBUTE_SUM_LINE),
    (ATTRIBUTE_ADD_, ATTRIBUTE_ADD_LINE),
    (ATTRIBUTE_APPEND, ATTRIBUTE_APPEND_LINE),
])
def test_adl023_attribute_of_the_training_object_is_reported(source, line):
    assert (_line_of(source, line), "ADL023") in _codes(source)
    finding = next(f for f in lint_source(source, "causes9.py") if f.code == "ADL023")
    assert "every call" in finding.message and ".item()" in finding.message


@pytest.mark.parametrize("source, old, new", [
    (ATTRIBUTE_SUM, "self.epoch_loss += loss", "self.epoch_loss += loss.item()"),
    (ATTRIBUTE_SUM, "self.epoch_loss += loss", "self.epoch_loss += loss.detach()"),
    (ATTRIBUTE_SUM, "self.epoch_loss += loss", "self.epoch_loss += float(loss)"),
    (ATTRIBUTE_ADD_, "err.cpu() * x", "err.detach().cpu() * x"),
    (ATTRIBUTE_ADD_, "err.cpu() * x", "err.item() * x"),
    (ATTRIBUTE_APPEND, "append(policy_loss)", "append(policy_loss.item())"),
    (ATTRIBUTE_APPEND, "append(policy_loss)", "append(float(policy_loss))"),
    # the attribute starts again in the call: it keeps one call's graph
    (ATTRIBUTE_SUM, "        self.epoch_loss += loss",
     "        self.epoch_loss = torch.zeros(())\n        self.epoch_loss += loss"),
    # under no_grad
    (ATTRIBUTE_SUM, "        self.epoch_loss += loss",
     "        with torch.no_grad():\n            self.epoch_loss += loss"),
    # the method is called once, by no loop of the file
    (ATTRIBUTE_SUM, "        for x, y in batches:\n            self.train_batch(x, y)",
     "        x, y = batches[0]\n        self.train_batch(x, y)"),
])
def test_adl023_attribute_near_twins_are_silent(source, old, new):
    twin = _twin(source, old, new)
    assert not [c for c in _codes(twin) if c[1] == "ADL023"]


def test_adl023_attribute_fix_applied_is_silent():
    findings = [f for f in lint_source(ATTRIBUTE_SUM, "causes9.py") if f.code == "ADL023"]
    fixed, count = apply_edits(ATTRIBUTE_SUM, findings, unsafe=True)
    assert count and "self.epoch_loss += loss.detach()" in fixed
    assert not [c for c in _codes(fixed) if c[1] == "ADL023"]


def _batches(count=3, seed=1):
    torch.manual_seed(seed)
    return [(torch.randn(4, 3), torch.randn(4, 2)) for _ in range(count)]


def _sgd_losses(model, batches, lr):
    """SGD by hand: each batch's loss (before its step) as a float."""
    values = []
    for x, y in batches:
        loss = ((model(x) - y) ** 2).mean()
        grads = torch.autograd.grad(loss, list(model.parameters()))
        with torch.no_grad():
            for p, g in zip(model.parameters(), grads):
                p -= lr * g
        values.append(loss.item())
    return values


def test_adl023_attribute_claims_run_with_torch():
    torch.manual_seed(0)
    net = torch.nn.Linear(3, 2)
    reference = _sgd_losses(_copy(net), _batches(), 0.1)
    buggy = _namespace(ATTRIBUTE_SUM)["Trainer"]
    trainer = buggy(_copy(net), None)
    trainer.optimizer = torch.optim.SGD(trainer.model.parameters(), lr=0.1)
    total = trainer.fit(_batches())
    assert total.grad_fn is not None  # the sum holds the graphs
    fixed = _namespace(_twin(ATTRIBUTE_SUM, "self.epoch_loss += loss", "self.epoch_loss += loss.item()"))["Trainer"]
    trainer = fixed(_copy(net), None)
    trainer.optimizer = torch.optim.SGD(trainer.model.parameters(), lr=0.1)
    total = trainer.fit(_batches())
    assert total.grad_fn is None
    assert total.item() == pytest.approx(sum(reference), rel=1e-6)


def _copy(net):
    twin = torch.nn.Linear(3, 2)
    twin.load_state_dict(net.state_dict())
    return twin


def test_adl023_attribute_add_and_append_claims_run_with_torch():
    torch.manual_seed(0)
    net = torch.nn.Linear(3, 2)
    namespace = _namespace(ATTRIBUTE_ADD_)
    seen = namespace["run"](namespace["Learner"](_copy(net)), _batches())
    assert seen.grad_fn is not None
    namespace = _namespace(_twin(ATTRIBUTE_ADD_, "err.cpu() * x", "err.detach().cpu() * x"))
    seen = namespace["run"](namespace["Learner"](_copy(net)), _batches())
    assert seen.grad_fn is None
    assert seen.item() == pytest.approx(4 * sum(_sgd_losses(_copy(net), _batches(), 0.1)), rel=1e-6)

    policy = torch.nn.Linear(3, 2)
    episodes = [(torch.randn(4, 3), torch.randn(4)) for _ in range(3)]
    agent = _namespace(ATTRIBUTE_APPEND)["Agent"](policy, torch.optim.SGD(policy.parameters(), lr=0.1))
    assert all(loss.grad_fn is not None for loss in agent.train(episodes))


# ----- ADL023: every entry of a loss dictionary summed under the iterated key ----

DICT_KEYS = textwrap.dedent("""
    import torch.nn.functional as F


    def train(model, optimizer, batches):
        totals = {"loss": 0.0, "mse": 0.0, "l1": 0.0}
        for x, y in batches:
            out = model(x)
            losses = {"mse": F.mse_loss(out, y), "l1": F.l1_loss(out, y)}
            losses["loss"] = losses["mse"] + losses["l1"]
            optimizer.zero_grad()
            losses["loss"].backward()
            optimizer.step()
            for name in losses:
                totals[name] += losses[name]
        return totals
    """)
DICT_KEYS_LINE = "totals[name] += losses[name]"

# fresh 1: `.items()` in a `while` loop, the entry scaled, the sum written out
DICT_ITEMS = textwrap.dedent("""
    from collections import defaultdict

    import torch.nn.functional as F


    def fit(net, opt, loader, steps):
        sums = defaultdict(float)
        it = iter(loader)
        step = 0
        while step < steps:
            x, y = next(it)
            pred = net(x)
            terms = {"total": F.smooth_l1_loss(pred, y), "abs": (pred - y).abs().mean()}
            (terms["total"] / 2).backward()
            opt.step()
            opt.zero_grad()
            for key, value in terms.items():
                sums[key] = sums[key] + value * x.shape[0]
            step += 1
        return sums
    """)
DICT_ITEMS_LINE = "sums[key] = sums[key] + value * x.shape[0]"

# fresh 2: `.keys()` in a method, the dictionary a model's result
DICT_METHOD = textwrap.dedent("""
    import torch


    class Runner:
        def __init__(self, model):
            self.model = model
            self.opt = torch.optim.Adam(model.parameters())

        def epoch(self, loader):
            running = {"total": 0, "kl": 0}
            for batch in loader:
                out = self.model(batch)
                self.opt.zero_grad()
                out["total"].backward()
                self.opt.step()
                for k in out.keys():
                    running[k] += out[k]
            return running
    """)
DICT_METHOD_LINE = "running[k] += out[k]"


@pytest.mark.parametrize("source, line", [
    (DICT_KEYS, DICT_KEYS_LINE),
    (DICT_ITEMS, DICT_ITEMS_LINE),
    (DICT_METHOD, DICT_METHOD_LINE),
])
def test_adl023_dict_entries_under_iterated_key_are_reported(source, line):
    assert (_line_of(source, line), "ADL023") in _codes(source)


@pytest.mark.parametrize("source, old, new", [
    (DICT_KEYS, "+= losses[name]", "+= losses[name].item()"),
    (DICT_KEYS, "+= losses[name]", "+= losses[name].detach()"),
    (DICT_KEYS, "+= losses[name]", "+= float(losses[name])"),
    (DICT_ITEMS, "+ value * x", "+ value.item() * x"),
    (DICT_ITEMS, "+ value * x", "+ float(value) * x"),
    (DICT_METHOD, "+= out[k]", "+= out[k].detach()"),
    # the totals start again on every iteration
    (DICT_METHOD, "        for batch in loader:\n",
     "        for batch in loader:\n            running = {\"total\": 0, \"kl\": 0}\n"),
    # another dictionary, of numbers, iterated
    (DICT_KEYS, "        for name in losses:\n            totals[name] += losses[name]",
     "        stats = {k: v.item() for k, v in losses.items()}\n"
     "        for name in stats:\n            totals[name] += stats[name]"),
])
def test_adl023_dict_near_twins_are_silent(source, old, new):
    twin = _twin(source, old, new)
    assert not [c for c in _codes(twin) if c[1] == "ADL023"]


def test_adl023_dict_claims_run_with_torch():
    torch.manual_seed(0)
    net = torch.nn.Linear(3, 2)
    model = _copy(net)
    totals = _namespace(DICT_KEYS)["train"](model, torch.optim.SGD(model.parameters(), lr=0.1), _batches())
    assert totals["loss"].grad_fn is not None and totals["mse"].grad_fn is not None
    model = _copy(net)
    fixed = _namespace(_twin(DICT_KEYS, "+= losses[name]", "+= losses[name].item()"))["train"]
    totals = fixed(model, torch.optim.SGD(model.parameters(), lr=0.1), _batches())
    assert all(isinstance(v, float) for v in totals.values())
    reference = _copy(net)
    expected = 0.0
    for x, y in _batches():
        out = reference(x)
        loss = torch.nn.functional.mse_loss(out, y) + torch.nn.functional.l1_loss(out, y)
        grads = torch.autograd.grad(loss, list(reference.parameters()))
        with torch.no_grad():
            for p, g in zip(reference.parameters(), grads):
                p -= 0.1 * g
        expected += loss.item()
    assert totals["loss"] == pytest.approx(expected, rel=1e-6)


# ----- ADL023: a loss moved before it is summed in the loop --------------------

MOVED_SUM = textwrap.dedent("""
    import torch.nn.functional as F


    def train(model, optimizer, loader):
        running = 0.0
        for x, y in loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            running += loss.cpu()
        return running
    """)


def test_adl023_moved_loss_is_reported_and_item_twin_silent():
    assert (_line_of(MOVED_SUM, "running += loss.cpu()"), "ADL023") in _codes(MOVED_SUM)
    for new in ("loss.cpu().item()", "loss.detach().cpu()", "float(loss.cpu())"):
        twin = _twin(MOVED_SUM, "running += loss.cpu()", f"running += {new}")
        assert not [c for c in _codes(twin) if c[1] == "ADL023"], new


# ----- ADL028: the entries of a dict a training step returns, summed per key ----

# a trainer's step returns its dictionary of loss terms; the epoch sums each
# term under its name (YOLO's ModelTrainer, r423, in other shapes)
RETURNED_TERMS = textwrap.dedent("""
    import torch
    import torch.nn.functional as F


    class Fitter:
        def __init__(self, net):
            self.net = net
            self.opt = torch.optim.SGD(net.parameters(), lr=0.1)

        def step(self, x, y):
            out = self.net(x)
            terms = {"mse": F.mse_loss(out, y), "l1": F.l1_loss(out, y)}
            self.opt.zero_grad()
            (terms["mse"] + terms["l1"]).backward()
            self.opt.step()
            return terms

        def epoch(self, batches):
            sums = {"mse": 0.0, "l1": 0.0}
            for x, y in batches:
                terms = self.step(x, y)
                for name, term in terms.items():
                    sums[name] += term * len(x)
            return sums
    """)
RETURNED_TERMS_LINE = "sums[name] += term * len(x)"

# fresh 2: plain functions, the step returning (loss, parts), the parts summed
# by index into a list of totals in a `while` loop.  (Written first with the
# optimizer handed in by an unseen caller: then nothing shows that `model` is a
# module with parameters, and the parts, not themselves backpropagated, have no
# evidence of a graph: silent by ADL028's policy.  The run loop now builds the
# optimizer from `model.parameters()`.)
RETURNED_PARTS = textwrap.dedent("""
    import torch


    def train_step(model, optimizer, x, y):
        pred = model(x)
        parts = [(pred - y).pow(2).mean(), (pred - y).abs().mean()]
        loss = parts[0] + 0.5 * parts[1]
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss, parts


    def run(model, data):
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        totals = [0.0, 0.0]
        i = 0
        while i < len(data):
            _, parts = train_step(model, optimizer, *data[i])
            for j in range(2):
                totals[j] += parts[j]
            i += 1
        return totals
    """)
RETURNED_PARTS_LINE = "totals[j] += parts[j]"


@pytest.mark.parametrize("source, line", [
    (RETURNED_TERMS, RETURNED_TERMS_LINE),
    (RETURNED_PARTS, RETURNED_PARTS_LINE),
])
def test_adl028_returned_entries_summed_per_key_are_reported(source, line):
    assert (_line_of(source, line), "ADL028") in _codes(source)


@pytest.mark.parametrize("source, old, new", [
    (RETURNED_TERMS, "+= term * len(x)", "+= term.item() * len(x)"),
    (RETURNED_TERMS, "+= term * len(x)", "+= term.detach() * len(x)"),
    (RETURNED_TERMS, "+= term * len(x)", "+= float(term) * len(x)"),
    (RETURNED_TERMS, "        return terms", "        return {k: v.item() for k, v in terms.items()}"),
    (RETURNED_PARTS, "+= parts[j]", "+= parts[j].item()"),
    (RETURNED_PARTS, "+= parts[j]", "+= float(parts[j])"),
    # the totals start again on every iteration
    (RETURNED_PARTS, "        _, parts =", "        totals = [0.0, 0.0]\n        _, parts ="),
])
def test_adl028_returned_entries_near_twins_are_silent(source, old, new):
    twin = _twin(source, old, new)
    assert not [c for c in _codes(twin) if c[1] in ("ADL023", "ADL028")]


def test_adl028_returned_entries_claims_run_with_torch():
    torch.manual_seed(0)
    net = torch.nn.Linear(3, 2)
    sums = _namespace(RETURNED_TERMS)["Fitter"](_copy(net)).epoch(_batches())
    assert all(v.grad_fn is not None for v in sums.values())
    fixed = _twin(RETURNED_TERMS, "+= term * len(x)", "+= term.item() * len(x)")
    sums = _namespace(fixed)["Fitter"](_copy(net)).epoch(_batches())
    reference = _copy(net)
    expected = 0.0
    for x, y in _batches():
        out = reference(x)
        mse = torch.nn.functional.mse_loss(out, y)
        grads = torch.autograd.grad(mse + torch.nn.functional.l1_loss(out, y), list(reference.parameters()))
        with torch.no_grad():
            for p, g in zip(reference.parameters(), grads):
                p -= 0.1 * g
        expected += mse.item() * len(x)
    assert sums["mse"] == pytest.approx(expected, rel=1e-6)
    model = _copy(net)
    totals = _namespace(RETURNED_PARTS)["run"](model, _batches())
    assert all(t.grad_fn is not None for t in totals)


# ----- ADL003: graphs kept in a list, read in a later loop that steps ----------

# outputs appended to a list in one loop, read back by index in the loop that
# backpropagates and steps (GNMOT's candidates, r438): from the second
# iteration on, the element read was computed before the first step
LIST_READ_BY_INDEX = textwrap.dedent("""
    import torch


    def update(net, head, data):
        opt = torch.optim.Adam(list(net.parameters()) + list(head.parameters()))
        outs = []
        for x, y in data:
            outs.append((net(x), y))
        for i in range(len(outs)):
            h, y = outs[i]
            opt.zero_grad()
            loss = ((head(h) - y) ** 2).mean()
            loss.backward()
            opt.step()
    """)
LIST_READ_BY_INDEX_STEP = "        opt.step()"

# fresh 1: a trainer class, the features cached in a `while` loop's list, the
# second loop a `while` too, a retained backward and a second loss
CACHED_FEATURES = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Trainer:
        def __init__(self):
            self.encoder = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 4))
            self.decoder = nn.Linear(4, 4)
            self.opt = torch.optim.SGD(list(self.encoder.parameters()) + list(self.decoder.parameters()), lr=0.1)

        def train(self, xs):
            cache = []
            n = 0
            while n < len(xs):
                cache.append(self.encoder(xs[n]))
                n += 1
            k = 0
            while k < len(cache):
                z = cache[k]
                self.opt.zero_grad()
                recon = (self.decoder(z) - xs[k]).pow(2).mean()
                recon.backward(retain_graph=True)
                (z.pow(2).mean() * 0.1).backward()
                self.opt.step()
                k += 1
    """)
CACHED_FEATURES_STEP = "            self.opt.step()"

# fresh 2: a script's top level, features of each view appended, then a loop
# over the indices
SCRIPT_FEATURES = textwrap.dedent("""
    import torch
    import torch.nn as nn

    torch.manual_seed(0)
    encoder = nn.Sequential(nn.Linear(3, 5), nn.ReLU(), nn.Linear(5, 2))
    optimizer = torch.optim.Adam(encoder.parameters(), lr=0.01)
    views = [torch.randn(6, 3) for _ in range(3)]
    feats = []
    for v in views:
        feats.append(encoder(v))
    for k in range(len(feats)):
        optimizer.zero_grad()
        loss = feats[k].pow(2).mean()
        loss.backward()
        optimizer.step()
    """)
SCRIPT_FEATURES_STEP = "    optimizer.step()"


def _step_line(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if line == text)


@pytest.mark.parametrize("source, step", [
    (LIST_READ_BY_INDEX, LIST_READ_BY_INDEX_STEP),
    (CACHED_FEATURES, CACHED_FEATURES_STEP),
    (SCRIPT_FEATURES, SCRIPT_FEATURES_STEP),
])
def test_adl003_list_of_old_graphs_is_reported(source, step):
    assert (_step_line(source, step), "ADL003") in _codes(source)


@pytest.mark.parametrize("source, old, new", [
    # the element recomputed in the loop that steps
    (LIST_READ_BY_INDEX, "        h, y = outs[i]", "        x, y = data[i]\n        h = net(x)"),
    # the features cut from the encoder's graph (the head alone is trained)
    (LIST_READ_BY_INDEX, "outs.append((net(x), y))", "outs.append((net(x).detach(), y))"),
    (SCRIPT_FEATURES, "feats = []\nfor v in views:\n    feats.append(encoder(v))\n",
     "feats = list(views)\n"),
    # the list filled again on every iteration, before its read
    (SCRIPT_FEATURES, "    optimizer.zero_grad()\n    loss = feats[k]",
     "    optimizer.zero_grad()\n    feats = [encoder(v) for v in views]\n    loss = feats[k]"),
])
def test_adl003_list_near_twins_are_silent(source, old, new):
    twin = _twin(source, old, new)
    assert not [c for c in _codes(twin) if c[1] == "ADL003"]


def _two_layers(seed=0):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Tanh(), torch.nn.Linear(4, 4)), torch.nn.Linear(4, 2)


def test_adl003_list_claims_run_with_torch():
    data = [(torch.randn(2, 4), torch.randn(2, 2)) for _ in range(3)]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _namespace(LIST_READ_BY_INDEX)["update"](*_two_layers(), data)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _namespace(CACHED_FEATURES)["Trainer"]().train([torch.randn(3, 4) for _ in range(3)])
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _namespace(SCRIPT_FEATURES)
    # the fix (recompute in the loop) runs and equals Adam applied by hand-written
    # per-batch steps with torch's own Adam on a copy
    net, head = _two_layers()
    fixed = _twin(LIST_READ_BY_INDEX, "        h, y = outs[i]", "        x, y = data[i]\n        h = net(x)")
    _namespace(fixed)["update"](net, head, data)
    ref_net, ref_head = _two_layers()
    opt = torch.optim.Adam(list(ref_net.parameters()) + list(ref_head.parameters()))
    for x, y in data:
        opt.zero_grad()
        ((ref_head(ref_net(x)) - y) ** 2).mean().backward()
        opt.step()
    for a, b in zip(list(net.parameters()) + list(head.parameters()),
                    list(ref_net.parameters()) + list(ref_head.parameters())):
        assert torch.equal(a, b)
