"""AD243's help as code: a layer whose one-statement forward reads its own parameters although it
is given adapted weights (an argument defaulting to None) gets a branch on that argument, with the
weights read as the file's other layers read theirs (`params["weight"]`). Held-out set 22,
HowToTrainYourMAMLPytorch#22: the legacy layer norm (advice only before). The two programs here
are other shapes: a scale-and-shift layer given `weights=`, and a bias-free projection given
`fast=`, whose siblings read `weights["..."]` / `fast["..."]`. The help applied trains as the
hand-written branch does; a file where no layer names the weights so keeps the advice."""

import pytest
import torch

from autograd_doctor.analysis.fixes import apply_replacement
from helpers import run_plain, run_program

SCALE_SHIFT = """
import torch
import torch.nn.functional as F
torch.manual_seed(0)


class MetaLinear(torch.nn.Linear):
    def forward(self, x, weights=None):
        if weights is None:
            return F.linear(x, self.weight, self.bias)
        return F.linear(x, weights["weight"], weights["bias"])


class ScaleShift(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.ones(n))
        self.shift = torch.nn.Parameter(torch.zeros(n))

    def forward(self, x, weights=None):
        return x * self.scale + self.shift  # READS


lin, affine = MetaLinear(2, 4), ScaleShift(4)


def model(x, fast=None):
    if fast is None:
        return affine(lin(x)).sum(dim=1)
    h = lin(x, {"weight": fast[0], "bias": fast[1]})
    return affine(h, {"scale": fast[2], "shift": fast[3]}).sum(dim=1)


all_params = list(lin.parameters()) + list(affine.parameters())
meta = torch.optim.Adam(all_params, lr=0.01)
x, y = torch.randn(6, 2), torch.randn(6)
for outer in range(2):
    meta.zero_grad()
    fast = list(all_params)
    for inner in range(2):
        loss = ((model(x, fast) - y) ** 2).mean()
        grads = torch.autograd.grad(loss, fast, create_graph=True, allow_unused=True)
        fast = [w if g is None else w - 0.05 * g for w, g in zip(fast, grads)]
    ((model(x, fast) - y) ** 2).mean().backward()
    meta.step()
params = [p.detach().clone() for p in all_params]
"""

PROJECTION = """
import torch
import torch.nn.functional as F
torch.manual_seed(0)


class Hidden(torch.nn.Linear):
    def forward(self, x, fast=None):
        w = self.weight if fast is None else fast["weight"]
        b = self.bias if fast is None else fast["bias"]
        return torch.relu(F.linear(x, w, b))


class Projection(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(1, 5) * 0.3)

    def forward(self, x, fast=None):
        return F.linear(x, self.weight)  # READS


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = Hidden(3, 5)
        self.out = Projection()

    def forward(self, x, fast=None):
        if fast is None:
            return self.out(self.hidden(x))
        sub = lambda p: {k[len(p) + 1:]: v for k, v in fast.items() if k.startswith(p + ".")}
        return self.out(self.hidden(x, sub("hidden")), sub("out"))


net = Net()
meta = torch.optim.SGD(net.parameters(), lr=0.05)
x, y = torch.randn(7, 3), torch.randn(7, 1)
for outer in range(2):
    meta.zero_grad()
    fast = dict(net.named_parameters())
    step = 0
    while step < 2:
        loss = ((net(x, fast) - y) ** 2).mean()
        grads = torch.autograd.grad(loss, list(fast.values()), create_graph=True, allow_unused=True)
        fast = {n: (w if g is None else w - 0.1 * g) for (n, w), g in zip(fast.items(), grads)}
        step += 1
    ((net(x, fast) - y) ** 2).mean().backward()
    meta.step()
params = [p.detach().clone() for p in net.parameters()]
"""

CASES = {
    "a scale-and-shift layer given weights=": (
        SCALE_SHIFT, '        return x * self.scale + self.shift  # READS',
        '        if weights is None:\n            return x * self.scale + self.shift\n'
        '        return x * weights["scale"] + weights["shift"]'),
    "a projection given fast=": (
        PROJECTION, '        return F.linear(x, self.weight)  # READS',
        '        if fast is None:\n            return F.linear(x, self.weight)\n'
        '        return F.linear(x, fast["weight"])'),
}


@pytest.mark.parametrize("name", list(CASES))
def test_the_branch_is_offered_as_code(tmp_path, name):
    source, _old, _new = CASES[name]
    outcome = run_program(tmp_path, source)
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD243")
    assert diagnosis.primary.line == outcome.line("READS")
    assert diagnosis.help[0].replacement and diagnosis.help[0].location.line == outcome.line("READS")


@pytest.mark.parametrize("name", list(CASES))
def test_the_branch_applied_trains_as_the_answer_does(tmp_path, name):
    source, old, new = CASES[name]
    outcome = run_program(tmp_path, source)
    change = next(d for d in outcome.diagnoses if d.code == "AD243").help[0]
    fixed_source = apply_replacement(outcome.source, change.location, change.replacement)
    fixed = run_plain(tmp_path, fixed_source)["params"]
    answer_source = source.replace(old, new)
    assert answer_source != source
    answer = run_plain(tmp_path, answer_source, name="answer.py")["params"]
    assert all(torch.equal(a, b) for a, b in zip(fixed, answer))
    buggy = run_plain(tmp_path, source, name="plain.py")["params"]
    assert not all(torch.equal(a, b) for a, b in zip(buggy, answer))
    silent = run_program(tmp_path, fixed_source, name="fixed_watched.py")
    assert not [d for d in silent.diagnoses if d.code == "AD243"]


def test_without_the_files_naming_the_help_stays_advice(tmp_path):
    source = SCALE_SHIFT.replace('weights["weight"], weights["bias"]', "*weights")
    source = source.replace('lin(x, {"weight": fast[0], "bias": fast[1]})', "lin(x, (fast[0], fast[1]))")
    outcome = run_program(tmp_path, source)
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD243")
    assert not any(h.replacement for h in diagnosis.help)
