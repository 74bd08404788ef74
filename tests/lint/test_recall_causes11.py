"""Causes left open by r422-r510 (docs/lint.md, "Recall causes worked on, 8
December (r422-r510)").

* ADL019, a loss summed across the iterations of a loop for a later backward
  (`accu += loss_3d / k`, backpropagated every k-th iteration), whose graph a
  backward of its own iteration freed before the sum: the value summed shares,
  through a binding made by a module with parameters in that iteration (or as
  another output of one call of a layer), the graph of a loss that an earlier
  backward of the body backpropagated without `retain_graph=True`.  The sum's
  backward, in a later iteration, goes through the freed graph and raises
  (VoxelPose's `train_3d`, r435).

Each cause: the plain form and fresh programs in other shapes (written before
the rule was run on them), buggy -> a finding at the line, near twins that are
correct silent, and the claim run with torch."""

from __future__ import annotations

import textwrap

import pytest
import torch

from autograd_doctor.lint import lint_source


def _codes(source: str) -> list[tuple[int, str]]:
    return [(f.line, f.code) for f in lint_source(source, "causes11.py")]


def _namespace(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "causes11.py", "exec"), namespace)
    return namespace


def _line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def _twin(source: str, old: str, new: str) -> str:
    assert source.count(old) == 1, old
    return source.replace(old, new)


# ----- ADL019: a carried sum whose graph its own iteration's backward freed --------

# the plain form (r435): two losses returned by one call of a module of the file
PLAIN = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class PoseNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.root = nn.Linear(6, 6)
            self.pose = nn.Linear(6, 3)

        def forward(self, views, t2d, t3d):
            heat = torch.relu(self.root(views))
            pred = self.pose(heat)
            return (heat - t2d).pow(2).mean(), (pred - t3d).pow(2).mean()


    def train(model, optimizer, loader, k=2):
        accu = 0
        for i, (x, t2d, t3d) in enumerate(loader):
            loss_2d, loss_3d = model(x, t2d, t3d)
            optimizer.zero_grad()
            loss_2d.backward()
            optimizer.step()
            if (i + 1) % k == 0:
                optimizer.zero_grad()
                accu.backward()
                optimizer.step()
                accu = 0
            else:
                accu += loss_3d / k


    def main(loader):
        model = PoseNet()
        train(model, torch.optim.SGD(model.parameters(), lr=0.1), loader)
""")

# fresh shape 1: a method, shared features from a held encoder, two heads, a
# `while` loop and `total = total + ...`
METHOD = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class MultiTask:
        def __init__(self):
            self.encoder = nn.Sequential(nn.Linear(5, 8), nn.Tanh())
            self.cls_head = nn.Linear(8, 3)
            self.aux_head = nn.Linear(8, 1)
            params = list(self.encoder.parameters()) + list(self.cls_head.parameters()) \\
                + list(self.aux_head.parameters())
            self.opt = torch.optim.SGD(params, lr=0.1)

        def fit(self, batches, every=2):
            aux_total = torch.zeros(())
            step = 0
            while step < len(batches):
                x, y, z = batches[step]
                feats = self.encoder(x)
                cls_loss = F.cross_entropy(self.cls_head(feats), y)
                aux_loss = F.mse_loss(self.aux_head(feats).squeeze(1), z)
                self.opt.zero_grad()
                cls_loss.backward()
                aux_total = aux_total + aux_loss
                step += 1
                if step % every == 0:
                    aux_total.backward()
                    self.opt.step()
                    aux_total = torch.zeros(())
""")

# fresh shape 2: a script's top level; the sum's backward before the sum in the body
SCRIPT = textwrap.dedent("""
    import torch
    import torch.nn as nn

    body = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 6))
    head = nn.Linear(6, 1)
    opt = torch.optim.Adam(list(body.parameters()) + list(head.parameters()), lr=1e-3)
    reg = 0.0
    for it in range(6):
        x = torch.randn(3, 4)
        h = body(x)
        if it > 0 and it % 3 == 0:
            reg.backward()
            reg = 0.0
        main_loss = head(h).pow(2).mean()
        opt.zero_grad()
        main_loss.backward()
        opt.step()
        reg += 1e-3 * h.abs().mean()
""")


@pytest.mark.parametrize("source, line", [
    (PLAIN, "accu.backward()"),
    (METHOD, "aux_total.backward()"),
    (SCRIPT, "reg.backward()"),
])
def test_adl019_carried_sum_of_freed_graph_is_reported(source, line):
    found = lint_source(source, "causes11.py")
    assert [(f.line, f.code) for f in found if f.code == "ADL019"] == [(_line_of(source, line), "ADL019")]
    message = next(f.message for f in found if f.code == "ADL019")
    if source is METHOD:  # the sum before the backward in the body: found before this cause too
        assert "already freed" in message and "`feats`" in message
    else:
        assert "freed that graph" in message and "in the iteration that computes it" in message


def _fixed(source: str, edits) -> str:
    for old, new in edits:
        source = _twin(source, old, new)
    return source


# the help applied: the summed loss backpropagated with the first loss, in its
# iteration; the total keeps numbers for the log, and the later backward goes
PLAIN_FIXED = _fixed(PLAIN, [("loss_2d.backward()", "(loss_2d + loss_3d / k).backward()"),
                             ("accu.backward()", "pass"),
                             ("accu += loss_3d / k", "accu += (loss_3d / k).item()")])
SCRIPT_FIXED = _fixed(SCRIPT, [("main_loss.backward()", "(main_loss + 1e-3 * h.abs().mean()).backward()"),
                               ("reg.backward()", "pass"),
                               ("reg += 1e-3 * h.abs().mean()", "reg += 1e-3 * h.abs().mean().item()")])


@pytest.mark.parametrize("twin", [
    PLAIN_FIXED,
    SCRIPT_FIXED,
    # the first backward retains its graph, and no step runs between it and the sum's backward
    _twin(METHOD, "cls_loss.backward()", "cls_loss.backward(retain_graph=True)"),
])
def test_adl019_carried_sum_near_twins_are_silent(twin):
    assert [c for c in _codes(twin) if c[1] == "ADL019"] == []


def test_adl019_sum_of_another_network_is_silent():
    """The summed loss comes from another network's own call: its graph is not the one freed."""
    source = textwrap.dedent("""
        import torch
        import torch.nn as nn

        a = nn.Linear(4, 1)
        b = nn.Linear(4, 1)
        opt_a = torch.optim.SGD(a.parameters(), lr=0.1)
        opt_b = torch.optim.SGD(b.parameters(), lr=0.1)
        acc = 0.0
        for it in range(4):
            x = torch.randn(3, 4)
            loss_a = a(x).pow(2).mean()
            opt_a.zero_grad()
            loss_a.backward()
            opt_a.step()
            if it % 2 == 1:
                opt_b.zero_grad()
                acc.backward()
                opt_b.step()
                acc = 0.0
            else:
                acc += b(x).pow(2).mean()
    """)
    assert _codes(source) == []
    _namespace(source)  # runs: the two graphs are separate


def _loader(count=4, seed=3):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(2, 6, generator=g), torch.randn(2, 6, generator=g), torch.randn(2, 3, generator=g))
            for _ in range(count)]


def test_adl019_carried_sum_claims_run_with_torch():
    # the buggy forms raise on the sum's backward
    ns = _namespace(PLAIN)
    torch.manual_seed(0)
    model = ns["PoseNet"]()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        ns["train"](model, torch.optim.SGD(model.parameters(), lr=0.1), _loader())
    ns = _namespace(METHOD)
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(5)
    batches = [(torch.randn(4, 5, generator=g), torch.randint(0, 3, (4,), generator=g), torch.randn(4, generator=g))
               for _ in range(4)]
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        ns["MultiTask"]().fit(batches)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        torch.manual_seed(0)
        _namespace(SCRIPT)

    # the help applied (the summed loss backpropagated with the first, in its iteration)
    # runs and equals SGD written by hand
    ns = _namespace(PLAIN_FIXED)
    torch.manual_seed(0)
    model = ns["PoseNet"]()
    torch.manual_seed(0)
    reference = ns["PoseNet"]()
    loader = _loader()
    ns["train"](model, torch.optim.SGD(model.parameters(), lr=0.1), loader)
    params = list(reference.parameters())
    with torch.no_grad():
        for i, (x, t2d, t3d) in enumerate(loader):
            with torch.enable_grad():
                loss_2d, loss_3d = reference(x, t2d, t3d)
                grads = torch.autograd.grad(loss_2d + loss_3d / 2, params)
            for p, gp in zip(params, grads):
                p.add_(gp, alpha=-0.1)  # as SGD steps
            # the sum's branch steps on the gradients it cleared: no change
    for p, q in zip(model.parameters(), reference.parameters()):
        assert torch.equal(p, q)
    # the retaining twin runs
    ns = _namespace(_twin(METHOD, "cls_loss.backward()", "cls_loss.backward(retain_graph=True)"))
    ns["MultiTask"]().fit(batches)
    torch.manual_seed(0)
    _namespace(SCRIPT_FIXED)
