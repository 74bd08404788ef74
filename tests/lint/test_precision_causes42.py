"""Debatable findings of sets AG-AJ (docs/lint.md, "Debatable findings worked on (sets
AG-AJ)").  The programs are written for these tests, in shapes other than the sets'.

- "The line runs": a finding inside `if self.<option>:` / `if <option>:` where the
  option is a parameter whose default is false and no call in the repository turns
  it on (RoseTTAFold's Performer `no_projection`,
  https://github.com/RosettaCommons/RoseTTAFold `network/performer_pytorch.py`;
  se3_diffusion's `return_logs`, https://github.com/jasonkyuyim/se3_diffusion
  `experiments/train_se3_diffusion.py`).  Silent when nothing can turn it on; still
  found when a call passes it by keyword, by position, through a configuration file
  that names it, or when a subclass or a string could set it.
"""

from __future__ import annotations

import os
import runpy
import sys

import pytest
import torch

from autograd_doctor.lint.engine import Selection, lint_file

LAYERS = '''
import torch
from torch import nn


class Gate(nn.Module):
    def __init__(self, d, rescale=False):
        super().__init__()
        self.lin = nn.Linear(d, d)
        self.rescale = rescale

    def forward(self, x):
        h = torch.sigmoid(self.lin(x))
        if self.rescale:
            h.mul_(2.0)
        return h


class Block(nn.Module):
    def __init__(self, d, rescale=False):
        super().__init__()
        self.gate = Gate(d, rescale=rescale)

    def forward(self, x):
        return self.gate(x) * x
'''

TRAIN = '''
import torch
from layers import Block


def main():
    torch.manual_seed(0)
    net = Block(4%s)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for _ in range(2):
        x = torch.randn(8, 4)
        loss = net(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.item()


if __name__ == "__main__":
    main()
'''

EPOCH = '''
import torch
from torch import nn
import torch.nn.functional as F


def run_epoch(model, opt, batches, keep_history=False):
    history = []
    for x, y in batches:
        loss = F.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if keep_history:
            history.append(loss)
    return history


def fit(model, opt, batches, epochs, keep_history=False):
    for _ in range(epochs):
        run_epoch(model, opt, batches, keep_history=keep_history)


def main():
    model = nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)]
    fit(model, opt, batches, 2%s)


if __name__ == "__main__":
    main()
'''


def _repo(tmp_path, files: dict) -> str:
    (tmp_path / "setup.py").write_text("")
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return str(tmp_path)


def _lines(path: str, code: str) -> list[int]:
    findings, _ = lint_file(path, selection=Selection(select=("ALL",)))
    return [f.line for f in findings if f.code == code]


def _write_line(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def _run(root: str, name: str):
    sys.path.insert(0, root)
    try:
        sys.modules.pop("layers", None)
        return runpy.run_path(os.path.join(root, name), run_name="not_main")["main"]()
    finally:
        sys.path.remove(root)
        sys.modules.pop("layers", None)


def test_option_never_turned_on_across_files_is_silent(tmp_path):
    root = _repo(tmp_path, {"layers.py": LAYERS, "train.py": TRAIN % ""})
    assert _lines(os.path.join(root, "layers.py"), "ADL001") == []
    assert isinstance(_run(root, "train.py"), float)  # trains: the write never runs


@pytest.mark.parametrize("call", [", rescale=True", ", True"])
def test_option_turned_on_by_keyword_or_position_is_found(tmp_path, call):
    root = _repo(tmp_path, {"layers.py": LAYERS, "train.py": TRAIN % call})
    assert _lines(os.path.join(root, "layers.py"), "ADL001") == [_write_line(LAYERS, "h.mul_(2.0)")]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _run(root, "train.py")


def test_option_named_in_a_config_file_or_string_is_found(tmp_path):
    train = (TRAIN % ", **cfg").replace("def main():", "def main(cfg={}):")
    root = _repo(tmp_path, {"layers.py": LAYERS, "train.py": train, "cfg.yaml": "rescale: true\n"})
    assert _lines(os.path.join(root, "layers.py"), "ADL001") == [_write_line(LAYERS, "h.mul_(2.0)")]
    train = (TRAIN % ", **cfg").replace("def main():", "def main(cfg={'rescale': True}):")
    root2 = tmp_path / "second"
    root2.mkdir()
    _repo(root2, {"layers.py": LAYERS, "train.py": train})
    assert _lines(os.path.join(str(root2), "layers.py"), "ADL001") == [_write_line(LAYERS, "h.mul_(2.0)")]


def test_option_set_by_a_subclass_is_found(tmp_path):
    sub = LAYERS + '''

class LoudGate(Gate):
    def __init__(self, d):
        super().__init__(d)
        self.rescale = True
'''
    root = _repo(tmp_path, {"layers.py": sub, "train.py": TRAIN % ""})
    assert _lines(os.path.join(root, "layers.py"), "ADL001") == [_write_line(LAYERS, "h.mul_(2.0)")]


def test_option_class_never_called_keeps_finding(tmp_path):
    # a library class nobody in the repository builds: no evidence how it is used
    root = _repo(tmp_path, {"layers.py": LAYERS.replace("self.gate = Gate(d, rescale=rescale)",
                                                        "self.gate = nn.Identity()")})
    assert _lines(os.path.join(root, "layers.py"), "ADL001") == [_write_line(LAYERS, "h.mul_(2.0)")]


def _kept(path):
    findings, _ = lint_file(path, selection=Selection(select=("ALL",)))
    return [(f.line, f.code) for f in findings if f.code in ("ADL023", "ADL028")]


def test_kept_loss_under_option_handed_on_is_silent(tmp_path):
    root = _repo(tmp_path, {"epoch.py": EPOCH % ""})
    assert _kept(os.path.join(root, "epoch.py")) == []
    _run(root, "epoch.py")


def test_kept_loss_under_option_turned_on_is_found(tmp_path):
    root = _repo(tmp_path, {"epoch.py": EPOCH % ", keep_history=True"})
    line = _write_line(EPOCH, "history.append(loss)")
    assert [c for l, c in _kept(os.path.join(root, "epoch.py")) if l == line]


# ADL031 (opt-in): escnn's batch-norm tests (https://github.com/QUVA-Lab/escnn,
# `test/nn/test_batchnorm.py`) evaluate norms built with `affine=False`: no parameter,
# the data is random, so nothing kept carries a graph.
NORM_PROBE = '''
import torch
from torch import nn


def collect(norm, batches):
    norm.eval()
    outs = []
    for x in batches:
        outs.append(norm(x))
    return outs


def run_local(batches):
    bn = nn.BatchNorm1d(6, affine=%s)
    bn(torch.randn(16, 6))
    bn.eval()
    kept = []
    for x in batches:
        kept.append(bn(x))
    return kept


def main():
    batches = [torch.randn(5, 6) for _ in range(3)]
    return collect(nn.LayerNorm(6%s), batches) + run_local(batches)
'''


def _opt_in_lines(tmp_path, text):
    path = tmp_path / "probe_norm.py"
    (tmp_path / "setup.py").write_text("")
    path.write_text(text)
    findings, _ = lint_file(str(path), selection=Selection(select=("ADL031",)))
    return [f.line for f in findings if f.code == "ADL031"], str(path)


def test_norm_without_affine_evaluated_is_silent(tmp_path):
    text = NORM_PROBE % ("False", ", elementwise_affine=False")
    lines, path = _opt_in_lines(tmp_path, text)
    assert lines == []
    outs = runpy.run_path(path, run_name="not_main")["main"]()
    assert not any(o.requires_grad for o in outs)  # no graph kept


def test_norm_with_affine_evaluated_is_found(tmp_path):
    text = NORM_PROBE % ("True", "")
    lines, path = _opt_in_lines(tmp_path, text)
    assert lines == [_write_line(text, "outs.append(norm(x))"), _write_line(text, "kept.append(bn(x))")]
    outs = runpy.run_path(path, run_name="not_main")["main"]()
    assert all(o.requires_grad for o in outs)  # each kept output holds its graph


def test_type_test_mentions_keep_silence_and_other_mentions_keep_finding(tmp_path):
    lookup = LAYERS + '''

def gates_of(model, kind):
    return [m for m in model.modules() if isinstance(m, kind)]


def count_gates(model):
    return len(gates_of(model, Gate)) + isinstance(model, Gate)
'''
    root = _repo(tmp_path, {"layers.py": lookup, "train.py": TRAIN % ""})
    assert _lines(os.path.join(root, "layers.py"), "ADL001") == []
    handed = LAYERS + '''

REGISTRY = {"gate": Gate}
'''
    second = tmp_path / "second"
    second.mkdir()
    _repo(second, {"layers.py": handed, "train.py": TRAIN % ""})
    assert _lines(os.path.join(str(second), "layers.py"), "ADL001") == [_write_line(LAYERS, "h.mul_(2.0)")]
