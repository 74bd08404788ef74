"""False findings of sets AE-AG worked on by cause (docs/lint.md, "False findings worked on
(sets AE-AG)"); each silent shape beside a real near-twin that is still found.

1. ADL001, "graph": Transformer-M's `Molecule3DBias.forward` reads `pos` from its batch
   dictionary argument and writes `delta_pos /= ...` after `delta_pos.norm()` kept it
   (https://github.com/lsj2408/Transformer-M, `modules/transformer_m_layers.py`).  The class
   is held by an encoder that only hands its own argument on, the encoder by a model whose
   class method `build_model` builds it as a local and hands it to `cls(...)`.  A class built
   in a class method or static method of a module class (a factory) is not built as a part of
   any instance's computation: that build is no evidence by itself that its forward is fed a
   graph (src/autograd_doctor/lint/submodules.py).  A part fed a computed value, or built as a
   local of an instance method, is still evidence.
"""

from __future__ import annotations

import os
import sys

import pytest
import torch
import torch.nn as nn

from autograd_doctor.lint.engine import Selection, lint_source


def found(source: str, code: str, filename: str = "<string>"):
    return [f.line for f in lint_source(source, filename=filename, selection=Selection(select=("ALL",)))
            if f.code == code]


def line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def load(source: str, name: str):
    module = type(sys)(name)
    exec(compile(source, name, "exec"), module.__dict__)
    return module


def repository(tmp_path, files: dict, main: str) -> str:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return os.fspath(tmp_path / main)


# --- 1. ADL001: a class built by a module class's factory method -------------------------

PAIR_BIAS = '''
import torch
import torch.nn as nn


class PairBias(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.proj = nn.Linear(1, k)

    def forward(self, sample):
        coords = sample["coords"]
        diff = coords.unsqueeze(1) - coords.unsqueeze(2)
        length = diff.norm(dim=-1)
        diff /= length.unsqueeze(-1) + 1e-5
        return self.proj(length.unsqueeze(-1)), diff
'''

# the encoder hands its own argument on; the model's class method builds the encoder
ENCODER_HANDS_ON = '''
import torch.nn as nn
from pair_bias import PairBias


class Encoder(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.bias = PairBias(k)
        self.out = nn.Linear(k, 1)

    def forward(self, sample):
        bias, diff = self.bias(sample)
        return self.out(bias).sum() + diff.sum()


class Model(nn.Module):
    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder

    @classmethod
    def build_model(cls, k):
        encoder = Encoder(k)
        return cls(encoder)

    def forward(self, sample):
        return self.encoder(sample)
'''

# a shape not taken from the set: a static factory that builds the part in the call
STATIC_FACTORY = '''
import torch.nn as nn
from pair_bias import PairBias


class Wrapper(nn.Module):
    def __init__(self, body):
        super().__init__()
        self.body = body

    @staticmethod
    def from_width(k):
        return Wrapper(PairBias(k))

    def forward(self, sample):
        bias, diff = self.body(sample)
        return bias.sum() + diff.sum()
'''

# real near-twin: the encoder feeds the part a value it computed
ENCODER_COMPUTES = '''
import torch.nn as nn
from pair_bias import PairBias


class Encoder(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.lift = nn.Linear(3, 3)
        self.bias = PairBias(k)
        self.out = nn.Linear(k, 1)

    def forward(self, sample):
        bias, diff = self.bias({"coords": self.lift(sample["coords"])})
        return self.out(bias).sum() + diff.sum()


class Model(nn.Module):
    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder

    @classmethod
    def build_model(cls, k):
        encoder = Encoder(k)
        return cls(encoder)

    def forward(self, sample):
        return self.encoder(sample)
'''

# real near-twin: a local part built in an instance method that feeds it a computed value
LOCAL_IN_INIT = '''
import torch.nn as nn
from pair_bias import PairBias


class Stack(nn.Module):
    def __init__(self, k):
        super().__init__()
        parts = [nn.Linear(3, 3), PairBias(k)]
        self.parts = nn.ModuleList(parts)
'''

WRITE = "diff /= length.unsqueeze(-1) + 1e-5"


def _backward(pair_bias_module, wrap, coords):
    bias, diff = pair_bias_module.PairBias(4)(wrap(coords))
    (bias.sum() + diff.sum()).backward()


@pytest.mark.parametrize("builder", [ENCODER_HANDS_ON, STATIC_FACTORY], ids=["classmethod", "staticmethod"])
def test_a_part_built_by_a_factory_method_and_fed_the_batch_is_silent(tmp_path, builder):
    path = repository(tmp_path, {"pair_bias.py": PAIR_BIAS, "model.py": builder}, "pair_bias.py")
    assert found(PAIR_BIAS, "ADL001", filename=path) == []
    # torch: the batch's coordinates need no gradient, the write breaks nothing
    pb = load(PAIR_BIAS, "pair_bias_pc1")
    _backward(pb, lambda c: {"coords": c}, torch.randn(2, 5, 3))


def test_a_part_fed_a_computed_value_is_still_found(tmp_path):
    path = repository(tmp_path, {"pair_bias.py": PAIR_BIAS, "model.py": ENCODER_COMPUTES}, "pair_bias.py")
    assert found(PAIR_BIAS, "ADL001", filename=path) == [line_of(PAIR_BIAS, WRITE)]
    pb = load(PAIR_BIAS, "pair_bias_pc2")
    lift = nn.Linear(3, 3)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _backward(pb, lambda c: {"coords": lift(c)}, torch.randn(2, 5, 3))


def test_a_local_part_of_an_instance_method_is_still_evidence(tmp_path):
    path = repository(tmp_path, {"pair_bias.py": PAIR_BIAS, "stack.py": LOCAL_IN_INIT}, "pair_bias.py")
    assert found(PAIR_BIAS, "ADL001", filename=path) == [line_of(PAIR_BIAS, WRITE)]


# real near-twin: the factory hands the part to the constructor, whose forward feeds it a
# value computed by another part (an encoder-decoder built by `build_model`)
FACTORY_THEN_COMPUTED = '''
import torch.nn as nn
from pair_bias import PairBias


class Model(nn.Module):
    def __init__(self, lift, head):
        super().__init__()
        self.lift = lift
        self.head = head

    @classmethod
    def build_model(cls, k):
        lift = nn.Linear(3, 3)
        head = PairBias(k)
        return cls(lift, head=head)

    def forward(self, sample):
        bias, diff = self.head({"coords": self.lift(sample["coords"])})
        return bias.sum() + diff.sum()
'''


def test_a_factory_built_part_its_holder_feeds_a_computed_value_is_still_found(tmp_path):
    path = repository(tmp_path, {"pair_bias.py": PAIR_BIAS, "model.py": FACTORY_THEN_COMPUTED}, "pair_bias.py")
    assert found(PAIR_BIAS, "ADL001", filename=path) == [line_of(PAIR_BIAS, WRITE)]


# --- 2. ADL001: a save in a later iteration, whose graph is only an untyped parameter's ----
# Transformer-M's `expected_alignment_formula` (examples/simultaneous_translation/tests/
# test_text_models.py): a reference recursion over `p_choose` in a test file whose other test
# calls `backward()`.  Its untyped parameter, rebound (`p_choose = p_choose.masked_fill(...)`),
# carries a graph only where a call passes one; the direct path waits for that call
# ("ADL001 untyped"), the previous-iteration path (`alpha[i, j] = alpha[i - 1, j]` before
# `alpha[i - 1, k] * ...` saves it) did not.  Now both wait.

REFERENCE = '''
import torch


def rescaled(out):
    return out / out.sum(-1, keepdim=True).clamp(min=1e-6)


def reference_scan(gates, mask, renormalise=True):
    out = torch.zeros_like(gates)
    gates = gates.masked_fill(mask, 0)
    for t in range(1, gates.size(0)):
        for j in range(gates.size(1)):
            out[t, j] = out[t - 1, j]
            for k in range(j):
                out[t, j] += out[t - 1, k] * gates[t, k]
    out = out.masked_fill(mask, 0)
    if renormalise:
        out = rescaled(out)
    return out


class Checks:
    def test_forward(self):
        loss = self.model(self.x).sum()
        loss.backward()

    def test_reference(self):
        expected = reference_scan(self.p_choose, self.mask)
        assert torch.isfinite(expected).all()
'''

# a shape not taken from the set: a running filter in a training script's helper
FILTER = '''
import torch


def smoothed(signal, decay):
    signal = signal.masked_fill(signal.isnan(), 0)
    acc = torch.zeros_like(signal)
    total = 0
    for t in range(1, signal.shape[0]):
        acc[t] = signal[t] * decay
        total = total + acc[t - 1] * signal[t]
    if total > 0:
        acc = acc / total
    return acc


def train(model, opt, batches):
    for x, y in batches:
        loss = ((model(x) - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return smoothed(torch.randn(8), 0.5)
'''

# real near-twin: a call in the file passes the model's output, which is then backpropagated
REFERENCE_FED = REFERENCE.replace(
    "        loss = self.model(self.x).sum()\n",
    "        loss = reference_scan(self.model(self.x), self.mask).sum()\n")

REFERENCE_WRITE = "            out[t, j] = out[t - 1, j]"


@pytest.mark.parametrize("source", [REFERENCE, FILTER], ids=["reference", "filter"])
def test_a_previous_iteration_save_of_an_untyped_parameter_no_call_feeds_is_silent(source):
    assert found(source, "ADL001") == []
    mod = load(source, "precision_causes_ref")
    if hasattr(mod, "reference_scan"):
        mod.reference_scan(torch.rand(4, 3), torch.rand(4, 3) > 0.9)
    else:
        mod.smoothed(torch.randn(8), 0.5)


def test_a_previous_iteration_save_a_call_feeds_a_graph_is_still_found():
    assert line_of(REFERENCE_FED, REFERENCE_WRITE) in found(REFERENCE_FED, "ADL001")
    mod = load(REFERENCE_FED, "precision_causes_ref2")
    gates = nn.Linear(3, 3)(torch.rand(4, 3))
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        mod.reference_scan(gates, gates > 0.9).sum().backward()
