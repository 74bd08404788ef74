"""ADL031 (opt-in) across the links of "Evaluation with gradients on, 8 December"
(docs/lint.md): the `eval()` in a same-file caller and the loop in the callee
(r497), a callee with no loop that appends to the caller's list (r510), a
model method that runs `self(...)` (r500), and helpers that return what the
module computes and collect it into a container from before the loop (r528).

Each cause: a shape written before the rule ran on it, found at the forward
with the help text; torch checks the claim (the kept values carry a graph; the
help applied gives the same values with none, and the linter is silent on it);
near twins that are correct stay silent."""

from __future__ import annotations

import sys

import torch

from autograd_doctor.lint.engine import Selection, lint_source

HEADER = """
import torch
import torch.nn as nn


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))

    def forward(self, x):
        return self.body(x)

    def score(self, x, y):
        logits = self(x)
        return nn.functional.cross_entropy(logits, y, reduction="none"), logits

    def score_detached(self, x, y):
        logits = self(x).detach()
        return nn.functional.cross_entropy(logits, y, reduction="none"), logits
"""

CALLER_LOOP = """
def collect(net, batches):
    found = []
    for x in batches:
        logits = net(x)
        found.append(logits)
    return found


def epoch(net, opt, batches):
    for x in batches:
        opt.zero_grad()
        net(x).pow(2).mean().backward()
        opt.step()


def main(net, opt, batches):
    net.train()
    epoch(net, opt, batches)
    net.eval()
    return collect(net, batches)
"""

CALLEE_NO_LOOP = """
def probe(net, x, store):
    y = net(x)
    store.append(y)
    return y.shape


def report(net, x):
    kept = []
    net.eval()
    shape = probe(net, x, kept)
    return kept, shape
"""

FORWARDING_METHOD = """
def evaluate(model, pairs):
    model.eval()
    scores = []
    for x, y in pairs:
        per_item, logits = model.score(x, y)
        scores.append(per_item)
    return torch.cat(scores)
"""

HELPERS = """
def run_one(net, x):
    return net(x * 2.0)


def gather(outs, bins):
    for key, value in outs.items():
        bins[key].append(value)


def predict_all(net, batches):
    net.eval()
    bins = {"a": [], "b": []}
    for x in batches:
        outs = {"a": run_one(net, x), "b": x}
        gather(outs, bins)
    return bins
"""

BUGGY = {
    "caller_loop": (CALLER_LOOP, "logits = net(x)"),
    "callee_no_loop": (CALLEE_NO_LOOP, "y = net(x)"),
    "forwarding_method": (FORWARDING_METHOD, "per_item, logits = model.score(x, y)"),
    "helpers": (HELPERS, 'outs = {"a": run_one(net, x), "b": x}'),
}


def findings(source: str, select=("ALL",)):
    return [f for f in lint_source(source, selection=Selection(select=select)) if f.code == "ADL031"]


def line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def load(source: str, name: str):
    module = type(sys)(name)
    exec(compile(source, name, "exec"), module.__dict__)
    return module


def test_each_cause_is_found_at_the_forward_with_the_help():
    for name, (body, text) in BUGGY.items():
        source = HEADER + body
        found = findings(source)
        assert [f.line for f in found] == [line_of(source, text)], name
        assert "gradients on" in found[0].message and "torch.no_grad()" in found[0].message, name
    caller = findings(HEADER + CALLER_LOOP)[0].message
    assert "`collect`" in caller and "`main` calls it" in caller
    assert "a list the caller keeps" in findings(HEADER + CALLEE_NO_LOOP)[0].message
    assert findings(HEADER + CALLER_LOOP, select=("ADL",)) == []  # opt-in


def _fixed(name: str) -> str:
    body = BUGGY[name][0]
    fixed = {
        "caller_loop": body.replace("    net.eval()\n    return collect(net, batches)",
                                    "    net.eval()\n    with torch.no_grad():\n        return collect(net, batches)"),
        "callee_no_loop": body.replace("    shape = probe(net, x, kept)",
                                       "    with torch.no_grad():\n        shape = probe(net, x, kept)"),
        "forwarding_method": body.replace(
            "    for x, y in pairs:\n        per_item, logits = model.score(x, y)\n        scores.append(per_item)",
            "    with torch.no_grad():\n        for x, y in pairs:\n            per_item, logits = model.score(x, y)\n"
            "            scores.append(per_item)"),
        "helpers": body.replace(
            "    for x in batches:\n        outs = {\"a\": run_one(net, x), \"b\": x}\n        gather(outs, bins)",
            "    with torch.no_grad():\n        for x in batches:\n            outs = {\"a\": run_one(net, x), \"b\": x}\n"
            "            gather(outs, bins)"),
    }[name]
    assert fixed != body, name
    return fixed


def _kept(name: str, source: str, net):
    torch.manual_seed(1)
    batches = [torch.randn(3, 4) for _ in range(2)]
    module = load(HEADER + source, name)
    if name == "caller_loop":
        return module.main(net, torch.optim.SGD(net.parameters(), lr=0.0), batches)
    if name == "callee_no_loop":
        return module.report(net, batches[0])[0]
    if name == "forwarding_method":
        return [module.evaluate(net, [(x, torch.tensor([0, 1, 0])) for x in batches])]
    return module.predict_all(net, batches)["a"]


def test_the_claim_holds_and_the_help_applied_keeps_the_values_without_a_graph():
    for name in BUGGY:
        torch.manual_seed(0)
        net = load(HEADER, "m").Scorer()
        buggy = _kept(name, BUGGY[name][0], net)
        fixed = _kept(name, _fixed(name), net)
        assert buggy and all(t.grad_fn is not None for t in buggy), name
        assert all(t.grad_fn is None for t in fixed), name
        assert all(torch.equal(b.detach(), f) for b, f in zip(buggy, fixed, strict=True)), name
        assert findings(HEADER + _fixed(name)) == [], name


def test_correct_near_twins_are_silent():
    twins = {
        # the caller turns gradients off around the call, or trains the module again first
        "caller_no_grad": CALLER_LOOP.replace("    return collect(net, batches)",
                                              "    with torch.no_grad():\n        return collect(net, batches)"),
        "caller_decorated": CALLER_LOOP.replace("def main(", "@torch.no_grad()\ndef main("),
        "train_between": CALLER_LOOP.replace("    return collect(net, batches)",
                                             "    net.train()\n    return collect(net, batches)"),
        # the caller trains: its eval() is a training mode (frozen batch norm), not an evaluation
        "caller_trains": CALLEE_NO_LOOP.replace("    return kept, shape",
                                                "    kept[0].sum().backward()\n    return kept, shape"),
        # what is kept holds no graph, or what a callable parameter returns is unknown
        # (the Annotated Transformer's `loss_compute(out, y, n)` returns a number)
        "callable_parameter": CALLER_LOOP.replace("def collect(net, batches):", "def collect(net, batches, score=len):")
                                         .replace("found.append(logits)", "found.append(score(logits))"),
        "callee_item": CALLEE_NO_LOOP.replace("store.append(y)", "store.append(y.sum().item())"),
        "callee_local_list": CALLEE_NO_LOOP.replace("    store.append(y)\n",
                                                    "    mine = []\n    mine.append(y)\n"),
        "method_item": FORWARDING_METHOD.replace("scores.append(per_item)",
                                                 "scores.append(per_item.detach())"),
        "helper_detached": HELPERS.replace("bins[key].append(value)", "bins[key].append(value.detach())"),
        # a helper that does not return the module's output
        "helper_no_return": HELPERS.replace("    return net(x * 2.0)", "    return x * 2.0"),
        # a method that does not run the model
        # a method that detaches what it returns (Continual-Learning-Benchmark's `predict`)
        "method_detaches": FORWARDING_METHOD.replace("model.score(x, y)", "model.score_detached(x, y)"),
        "method_no_forward": FORWARDING_METHOD.replace("model.score(x, y)", "model.prepare(x, y)"),
    }
    for name, twin in twins.items():
        assert twin not in BUGGY.values() and twin not in [b for b, _ in BUGGY.values()], name
        assert findings(HEADER + twin) == [], name


# ADL033: a `no_grad` block that only prepares the input; the forward runs after it (r518).
BLOCK_BEFORE_FORWARD = """
def labels(net, batches, device="cpu"):
    net.eval()
    out = []
    for raw in batches:
        with torch.no_grad():
            x = raw.to(device).float() * 0.5
        pred = net(x)
        out.append(pred.argmax(1).tolist())
        last = pred
    return out, last
"""


def adl033(source: str, select=("ALL",)):
    return [f for f in lint_source(source, selection=Selection(select=select)) if f.code == "ADL033"]


def test_adl033_finds_the_forward_after_the_block_and_the_claim_holds():
    source = HEADER + BLOCK_BEFORE_FORWARD
    found = adl033(source)
    assert [f.line for f in found] == [line_of(source, "pred = net(x)")]
    assert "block at line %d ends before this forward" % line_of(source, "with torch.no_grad():") in found[0].message
    assert adl033(source, select=("ADL",)) == []  # opt-in
    fixed = BLOCK_BEFORE_FORWARD.replace("            x = raw.to(device).float() * 0.5\n        pred = net(x)\n",
                                         "            x = raw.to(device).float() * 0.5\n            pred = net(x)\n")
    assert fixed != BLOCK_BEFORE_FORWARD and adl033(HEADER + fixed) == []
    torch.manual_seed(0)
    net = load(HEADER, "m").Scorer()
    batches = [torch.randn(3, 4) for _ in range(2)]
    out_b, last_b = load(source, "b").labels(net, batches)
    out_f, last_f = load(HEADER + fixed, "f").labels(net, batches)
    assert last_b.grad_fn is not None and last_f.grad_fn is None
    assert out_b == out_f and torch.equal(last_b.detach(), last_f)


def test_adl033_near_twins_are_silent():
    body = BLOCK_BEFORE_FORWARD
    twins = {
        "forward_in_block": body.replace("        pred = net(x)\n", "            pred = net(x)\n"),
        "block_unrelated": body.replace("        pred = net(x)\n", "        pred = net(raw)\n"),
        "rebound_first": body.replace("        pred = net(x)\n", "        x = raw * 2.0\n        pred = net(x)\n"),
        "trains": body.replace("        last = pred\n", "        last = pred\n        pred.sum().backward()\n"),
        "decorated": "@torch.no_grad()\n" + body.lstrip("\n"),
        "no_eval": body.replace("    net.eval()\n", ""),
        "later_block": body.replace("        pred = net(x)\n", "        with torch.no_grad():\n            pred = net(x)\n"),
    }
    for name, twin in twins.items():
        assert twin != body, name
        assert adl033(HEADER + twin) == [], name
