"""Set AF's false findings (docs/lint.md, "A thirty-fourth held-out check: set AF"): three
links that now need evidence, each "no tensor or no graph, but taken for one".

- ADL001, "the written value is a tensor": `encoded_layers = self.encoder(...)` of a same-file
  module whose `forward` returns a list (`all_encoder_layers = []`, appended, returned), then
  `encoded_layers[-1] = ...` replaces an item of that list (DeepSpeedExamples' BERT;
  src/autograd_doctor/lint/list_forwards.py).  A module returning a tensor is still found.
- ADL005, "the detached value aliases a tensor used later": `rel = torch.unsqueeze(x.clone(),
  -1).detach()` was taken as sharing memory with `torch` (AlphaPose's inverse kinematics).  The
  function form of a view names its first argument; a `.clone()` is fresh.  `torch.unsqueeze(h,
  -1).detach()` of a graph tensor is still found, naming `h`.
- ADL003, "graph": `noise = model.get_noise(n)` of a method, in another file, that returns
  `torch.randn(...)` and formats an attribute into its error message
  (incremental_learning.pytorch's zero-shot generator loop).  A method that runs a layer is
  still found.
"""

from __future__ import annotations

import sys

import pytest
import torch

from autograd_doctor.lint.engine import Selection, lint_file, lint_source

ENCODER = """
import torch
import torch.nn as nn


class Stack(nn.Module):
    def __init__(self, dim, depth):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(dim, dim) for _ in range(depth)])

    def forward(self, h, keep_all=True):
        outs = []
        for layer in self.layers:
            h = torch.tanh(layer(h))
            if keep_all:
                outs.append(h)
        if not keep_all:
            outs.append(h)
        return outs


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.stack = Stack(dim, 2)
        self.head = nn.Linear(dim, 2)

    def forward(self, x, trim=0):
        hs = self.stack(x)
        pooled = self.head(hs[-1])
        if trim > 0:
            hs[-1] = hs[-1][:, :-trim]  # WRITE
        return hs, pooled
"""

# The same model whose body returns one tensor: the indexed write lands in the head's input.
TENSOR_BODY = ENCODER.replace("        return outs\n", "        return h\n").replace(
    "outs = []", "outs = None").replace("                outs.append(h)\n", "                pass\n").replace(
    "        if not keep_all:\n            outs.append(h)\n", "").replace(
    "hs[-1] = hs[-1][:, :-trim]  # WRITE", "hs[-1] = hs[-1] * 0  # WRITE")

SKELETON = """
import torch


def relative(pose):
    rel = torch.unsqueeze(pose.clone(), dim=-1).detach()  # COPY
    rel[:, 1:] = rel[:, 1:] - rel[:, :-1].clone()  # WRITE
    final = torch.unsqueeze(pose, dim=-1) * 2
    return final, rel, torch.ones(1)
"""

# Without the copy the detached view shares `pose`'s memory: the write changes `pose`.
SKELETON_SHARED = SKELETON.replace("torch.unsqueeze(pose.clone(), dim=-1).detach()",
                                   "torch.unsqueeze(pose, dim=-1).detach()")

NETWORK = """
import torch
import torch.nn as nn


class Generator(nn.Module):
    def __init__(self, dim, kind="normal"):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(dim, dim), nn.Tanh(), nn.Linear(dim, dim))
        self.dim = dim
        self.kind = kind

    def get_noise(self, n):
        if self.kind == "normal":
            return torch.randn(n, self.dim).to("cpu")
        elif self.kind == "uniform":
            return torch.rand(n, self.dim).to("cpu")
        else:
            raise ValueError(f"unknown noise {self.kind}")

    def forward(self, x):
        return self.enc(x)
"""

LOOP = """
import torch
import torch.nn.functional as F


def train(gen, disc, batches):
    opt_g = torch.optim.SGD(gen.enc.parameters(), lr=0.1)
    opt_d = torch.optim.SGD(disc.parameters(), lr=0.1)
    for x in batches:
        opt_g.zero_grad()
        opt_d.zero_grad()
        z = gen.get_noise(len(x))
        loss_g = F.mse_loss(gen(x), x)
        loss_g.backward()
        opt_g.step()  # STEP
        d_loss = disc(z).mean()
        d_loss.backward()
        opt_d.step()
"""

# `z` from a method that runs the encoder: its graph is old when the generator steps.
LOOP_ENCODED = LOOP.replace("z = gen.get_noise(len(x))", "z = gen(x)")


def found(source: str, code: str):
    return [f.line for f in lint_source(source, filename="<string>", selection=Selection(select=("ALL",)))
            if f.code == code]


def line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def load(source: str, name: str):
    module = type(sys)(name)
    exec(compile(source, name, "exec"), module.__dict__)
    return module


def test_an_item_of_a_list_returned_by_a_module_is_silent_and_trains():
    assert found(ENCODER, "ADL001") == []
    torch.manual_seed(0)
    model = load(ENCODER, "set_af_encoder").Model(4)
    hs, pooled = model(torch.randn(3, 4), trim=1)
    (pooled.sum() + hs[-1].sum()).backward()  # the item replaced, nothing saved was written
    assert hs[-1].shape == (3, 3)
    assert all(p.grad is not None for p in model.head.parameters())


def test_the_same_write_into_a_tensor_body_is_still_found_and_raises():
    assert found(TENSOR_BODY, "ADL001") == [line_of(TENSOR_BODY, "# WRITE")]
    model = load(TENSOR_BODY, "set_af_tensor_body").Model(4)
    hs, pooled = model(torch.randn(3, 4), trim=1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        pooled.sum().backward()


def test_a_detached_copy_from_the_function_form_is_silent_and_leaves_its_source():
    assert found(SKELETON, "ADL005") == []
    pose = torch.arange(6.0).view(2, 3)
    before = pose.clone()
    _, rel, _ = load(SKELETON, "set_af_skeleton").relative(pose)
    assert torch.equal(pose, before)
    assert not torch.equal(rel.squeeze(-1), before)


def test_a_detached_view_from_the_function_form_is_found_naming_its_source():
    findings = [f for f in lint_source(SKELETON_SHARED, selection=Selection(select=("ALL",)))
                if f.code == "ADL005"]
    assert [f.line for f in findings] == [line_of(SKELETON_SHARED, "# WRITE")]
    assert "`pose`" in findings[0].message and "`torch`" not in findings[0].message
    pose = torch.arange(6.0).view(2, 3)
    before = pose.clone()
    load(SKELETON_SHARED, "set_af_skeleton_shared").relative(pose)
    assert not torch.equal(pose, before)  # the write changed `pose`, as the finding says


def _write_project(tmp_path, loop: str):
    (tmp_path / "network.py").write_text(NETWORK)
    (tmp_path / "loops.py").write_text(loop)
    findings, _ = lint_file(str(tmp_path / "loops.py"), selection=Selection(select=("ALL",)))
    return [f.line for f in findings if f.code == "ADL003"]


def _run(loop: str, name: str):
    torch.manual_seed(0)
    gen = load(NETWORK, "set_af_network").Generator(4)
    disc = torch.nn.Linear(4, 1)
    load(loop, name).train(gen, disc, [torch.randn(5, 4) for _ in range(3)])


def test_noise_from_a_method_of_another_file_is_silent_and_trains(tmp_path):
    assert _write_project(tmp_path, LOOP) == []
    _run(LOOP, "set_af_loop")


def test_a_value_from_the_encoder_is_still_found_and_fails(tmp_path):
    assert _write_project(tmp_path, LOOP_ENCODED) == [line_of(LOOP_ENCODED, "# STEP")]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _run(LOOP_ENCODED, "set_af_loop_encoded")
