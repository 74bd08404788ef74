"""Recall causes of r606-r645 (docs/lint.md, "Recall causes worked on
(r606-r645)").

* ADL001 through a helper that writes its parameter under a configured `if`
  (r624, r641: `Normalize.cut(x)` does `if left is not None: x[x < left] =
  left` with `left` read from `self`; the trainer hands it sigmoid
  probabilities through the module's forward).  A write under an `if` whose
  test reads only configuration (attributes of `self`, module constants,
  locals bound from those) counts as a write of the parameter, as a module
  forward's own write under such an `if` already did.

Fresh shapes (tests/lint/recall_causes17_programs/, written and run under torch
before the rule ran on them): a same-class helper masking softmax weights, a
top-level helper clipping a tanh output under a module-level setting, a module
flooring `exp` rates (found before too).  Near twins (`ok01_near_twins.py`): a
`Linear` output floored in place (nothing keeps it), a write under a flag
parameter that no caller sets."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch

from autograd_doctor.lint import lint_source

PROGRAMS = Path(__file__).parent / "recall_causes17_programs"


def _load(path: Path, source: str | None = None):
    if source is None:
        spec = importlib.util.spec_from_file_location(f"rc17_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    namespace: dict = {"__name__": f"rc17_fixed_{path.stem}"}
    exec(compile(source, f"<fixed {path.name}>", "exec"), namespace)
    return namespace


def _found(source: str, name: str, code: str = "ADL001"):
    return [f for f in lint_source(source, name) if f.code == code]


@pytest.mark.parametrize("name", ["b01_softmax_masked_by_helper_method.py",
                                  "b01_tanh_clipped_by_module_constant.py",
                                  "b01_exp_rates_floored_by_module.py"])
def test_adl001_found_at_the_call_and_the_program_raises(name):
    path = PROGRAMS / name
    source = path.read_text(encoding="utf-8")
    bug_line = next(i for i, line in enumerate(source.splitlines(), 1) if "# bug" in line)
    findings = _found(source, str(path))
    assert [f.line for f in findings] == [bug_line]
    assert "in place" in findings[0].message and "saved it for backward" in findings[0].message
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _load(path).run()


def test_near_twins_stay_silent_and_train():
    path = PROGRAMS / "ok01_near_twins.py"
    assert _found(path.read_text(encoding="utf-8"), str(path)) == []
    module = _load(path)
    module.run_floor()
    module.run_flag()


def test_helper_written_out_of_place_is_silent_and_gives_the_hand_written_gradient():
    """The change the finding asks for (the helper no longer writes the kept
    output: `weights = weights.masked_fill(pad, fill)`), applied: silent, runs,
    and the gradient equals the hand-written softmax-then-mask version."""
    path = PROGRAMS / "b01_softmax_masked_by_helper_method.py"
    source = path.read_text(encoding="utf-8")
    fixed = source.replace("weights[pad] = fill", "weights = weights.masked_fill(pad, fill)")
    assert fixed != source
    assert _found(fixed, "fixed.py") == []
    ns = _load(path, fixed)
    torch.manual_seed(0)
    model = ns["Attention"](8, pad_value=0.0)
    x = torch.randn(2, 3, 8)
    pad = torch.zeros(2, 3, 3, dtype=torch.bool)
    pad[..., 2] = True
    model(x, pad).sum().backward()
    got = model.qk.weight.grad.clone()
    model.zero_grad()
    q, k = model.qk(x).chunk(2, dim=-1)
    w = torch.where(pad, torch.zeros(()), torch.softmax(q @ k.transpose(1, 2), dim=-1))
    (w @ x).sum().backward()
    assert torch.equal(got, model.qk.weight.grad)


def test_configured_if_counts_but_a_parameter_test_or_inplace_switch_does_not():
    source = '''
import torch

class Gate(torch.nn.Module):
    def __init__(self, lo=0.1, inplace=True):
        super().__init__()
        self.lo, self.inplace = lo, inplace

    def floor(self, p):
        lo = self.lo
        if lo is not None:
            p[p < lo] = lo
        return p

    def floor_if_asked(self, p, lo=None):
        if lo is not None:
            p[p < lo] = lo
        return p

    def floor_if_inplace(self, p):
        if self.inplace:
            p.clamp_(min=self.lo)
        return p

    def forward(self, x):
        a = torch.sigmoid(x)
        a = self.floor(a)
        b = torch.sigmoid(x)
        b = self.floor_if_asked(b)
        c = torch.sigmoid(x)
        c = self.floor_if_inplace(c)
        return a + b + c
'''
    lines = source.splitlines()
    findings = _found(source, "gate.py")
    assert [lines[f.line - 1].strip() for f in findings] == ["a = self.floor(a)"]


# ADL040 (r616): `requires_grad` set on a tensor computed with a graph.

@pytest.mark.parametrize("name", ["b40_attention_map_marked_requires_grad.py",
                                  "b40_backbone_features_frozen_by_flag.py"])
def test_adl040_found_and_the_program_raises(name):
    path = PROGRAMS / name
    source = path.read_text(encoding="utf-8")
    bug_line = next(i for i, line in enumerate(source.splitlines(), 1) if "# bug" in line)
    findings = _found(source, str(path), "ADL040")
    assert [f.line for f in findings] == [bug_line]
    assert "you can only change requires_grad flags of leaf variables" in findings[0].message
    with pytest.raises(RuntimeError, match="only change requires_grad flags of leaf variables"):
        _load(path).run()


def test_adl040_near_twins_stay_silent_and_run():
    path = PROGRAMS / "ok40_near_twins.py"
    assert _found(path.read_text(encoding="utf-8"), str(path), "ADL040") == []
    _load(path).run()


def test_adl040_help_applied_gives_the_hand_written_gradient():
    """Each change the finding offers, where it fits the program's intent, applied:
    `retain_grad()` alone for the attention map (it already requires grad), and
    `.detach()` for the probe's features; each is silent, runs, and gives the
    hand-written gradients."""
    path = PROGRAMS / "b40_attention_map_marked_requires_grad.py"
    source = path.read_text(encoding="utf-8")
    kept = source.replace("        attn_map.requires_grad = True  # bug\n", "")
    assert kept != source and _found(kept, "fixed.py", "ADL040") == []
    ns = _load(path, kept)
    torch.manual_seed(0)
    model = ns["SaliencyAttention"]()
    x = torch.randn(2, 4, 6)
    model(x).pow(2).mean().backward()
    got = model.q.weight.grad.clone()
    assert model.saved_map.grad is not None
    model.zero_grad()
    attn = torch.softmax(model.q(x) @ model.k(x).transpose(1, 2) / 6 ** 0.5, dim=-1)
    (attn @ x).pow(2).mean().backward()
    assert torch.equal(got, model.q.weight.grad)

    path = PROGRAMS / "b40_backbone_features_frozen_by_flag.py"
    source = path.read_text(encoding="utf-8")
    cut = source.replace("features.requires_grad_(False)  # bug", "features = features.detach()")
    assert cut != source and _found(cut, "fixed.py", "ADL040") == []
    ns = _load(path, cut)
    nn, F = ns["nn"], ns["F"]
    torch.manual_seed(0)
    backbone = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
    probe = nn.Linear(4, 3)
    images, labels = torch.randn(2, 3, 8, 8), torch.tensor([0, 2])
    w0, b0 = probe.weight.detach().clone(), probe.bias.detach().clone()
    ns["probe_step"](backbone, probe, torch.optim.SGD(probe.parameters(), lr=0.1), images, labels)
    assert all(p.grad is None for p in backbone.parameters())
    feats = backbone(images).flatten(1).detach()
    w, b = w0.clone().requires_grad_(), b0.clone().requires_grad_()
    F.cross_entropy(feats @ w.T + b, labels).backward()
    assert torch.allclose(probe.weight.grad, w.grad, atol=1e-7)
