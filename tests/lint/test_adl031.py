"""ADL031: an evaluation loop (`model.eval()`, no backward) that runs the model
with gradients on and keeps its outputs beyond the iteration: every batch builds
a graph whose saved activations live as long as the kept output.

Buggy shapes are found at the forward; the change the message names (run the
loop under `torch.no_grad()`), applied, gives the same values without a graph,
and the linter is silent on it.  Near-twins stay silent: `no_grad` (block or
decorator, or every caller's context), `.item()` / `.detach()` of what is kept,
a loop that trains."""

from __future__ import annotations

import sys

import torch

from autograd_doctor.lint.engine import Selection, lint_source

HEADER = """
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
"""

BUGGY = {
    "outputs_listed": ("""
def predict(model, loader):
    model.eval()
    outputs = []
    for x in loader:
        out = model(x)
        outputs.append(out)
    return torch.cat(outputs)
""", "out = model(x)"),
    "kept_on_self": ("""
class Evaluator:
    def __init__(self, net):
        self.net = net
        self.last = None

    def run(self, loader):
        self.net.eval()
        total = 0.0
        for x in loader:
            pred = self.net(x)
            total += pred.sum().item()
            self.last = pred
        return total
""", "pred = self.net(x)"),
}


def findings(source: str, select=("ALL",)):
    return [f for f in lint_source(source, selection=Selection(select=select)) if f.code == "ADL031"]


def line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def load(source: str, name: str):
    module = type(sys)(name)
    exec(compile(source, name, "exec"), module.__dict__)
    return module


def test_buggy_shapes_are_found_at_the_forward_and_keep_a_graph():
    loader = [torch.randn(3, 4) for _ in range(2)]
    for name, (body, text) in BUGGY.items():
        source = HEADER + body
        found = findings(source)
        assert [f.line for f in found] == [line_of(source, text)], name
        assert "no_grad" in found[0].message
    assert load(HEADER + BUGGY["outputs_listed"][0], "p").predict(load(HEADER, "m").model, loader).grad_fn is not None


def test_the_fix_under_no_grad_is_silent_and_gives_the_same_values():
    loader = [torch.randn(3, 4) for _ in range(2)]
    body = BUGGY["outputs_listed"][0]
    fixed = body.replace("    for x in loader:\n        out = model(x)\n        outputs.append(out)\n",
                         "    with torch.no_grad():\n        for x in loader:\n            out = model(x)\n"
                         "            outputs.append(out)\n")
    assert fixed != body and findings(HEADER + fixed) == []
    net = load(HEADER, "m").model
    buggy_out = load(HEADER + body, "b").predict(net, loader)
    fixed_out = load(HEADER + fixed, "f").predict(net, loader)
    assert fixed_out.grad_fn is None and torch.equal(buggy_out.detach(), fixed_out)


def test_near_twins_are_silent():
    body = BUGGY["outputs_listed"][0]
    twins = {
        "decorated": "@torch.no_grad()\n" + body.lstrip("\n"),
        "item": body.replace("outputs.append(out)", "outputs.append(out.sum().item())"),
        "detach": body.replace("outputs.append(out)", "outputs.append(out.detach())"),
        "trains": body.replace("outputs.append(out)", "out.sum().backward()\n        outputs.append(out)"),
        "caller_no_grad": body + "\n\ndef main(loader):\n    with torch.no_grad():\n        return predict(model, loader)\n",
    }
    for name, twin in twins.items():
        assert twin != body, name
        assert findings(HEADER + twin) == [], name


def test_opt_in():
    assert findings(HEADER + BUGGY["outputs_listed"][0], select=("ADL",)) == []


def test_a_module_that_evaluates_itself_in_a_method_called_without_arguments():
    # `self.eval()` in a method that its only call passes no argument: the rule once took `self`
    # for the call's argument before the first (call.args[-1] of no arguments: an IndexError that
    # ended the whole lint run of a repository, TransT of set AK). `self` is the object the method
    # runs on, so the loop is judged as any other.
    body = """
class Tracker(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 2)
        self.frames = [torch.randn(3, 4) for _ in range(2)]
        self.history = []

    def forward(self, x):
        return self.net(x)

    def track(self):
        self.eval()
        for frame in self.frames:
            box = self(frame)
            self.history.append(box)


tracker = Tracker()
tracker.track()
"""
    found = findings(HEADER + body)
    assert [f.line for f in found] == [line_of(HEADER + body, "box = self(frame)")]
    assert load(HEADER + body, "t").tracker.history[0].grad_fn is not None
