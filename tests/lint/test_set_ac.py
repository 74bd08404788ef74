"""Set AC's debatable findings (docs/lint.md, "A thirty-first held-out check: set
AC"): a link that now needs evidence.

- ADL015/ADL001, "the write runs with gradients": an attention whose `forward`
  first returns torch's fused `F.multi_head_attention_forward` when the torch has
  it (a feature test kept on `self` by `__init__`) and the caller leaves the
  incremental-decoding arguments at their defaults; its own attention after that
  `return` (`q *= scaling` on a `chunk` view) runs only for a non-default call.
  Silent now (src/autograd_doctor/lint/fallbacks.py).  The same write without the
  early return, or after a return whose test does not hold at the defaults, is
  still found, and torch raises on it.
"""

from __future__ import annotations

import sys

import pytest
import torch

from autograd_doctor.lint.engine import Selection, lint_source

ATTENTION = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.dim, self.heads = dim, heads
        self.scaling = (dim // heads) ** -0.5
        self.in_proj_weight = nn.Parameter(torch.randn(3 * dim, dim) * 0.1)
        self.in_proj_bias = nn.Parameter(torch.zeros(3 * dim))
        self.out_proj = nn.Linear(dim, dim)
        self.use_fused = False
        if hasattr(F, "multi_head_attention_forward"):
            self.use_fused = True
        else:
            self.use_fused = False

    def forward(self, query, cache=None, static_kv=False):
        length, batch, dim = query.shape
        if self.use_fused and cache is None and not static_kv:
            return F.multi_head_attention_forward(
                query, query, query, dim, self.heads, self.in_proj_weight, self.in_proj_bias,
                None, None, False, 0.0, self.out_proj.weight, self.out_proj.bias,
                training=self.training, need_weights=False)[0]
        q, k, v = F.linear(query, self.in_proj_weight, self.in_proj_bias).chunk(3, dim=-1)
        q *= self.scaling  # the fallback: only for a call that passes `cache` or `static_kv`
        q = q.reshape(length, batch * self.heads, -1).transpose(0, 1)
        k = k.reshape(length, batch * self.heads, -1).transpose(0, 1)
        v = v.reshape(length, batch * self.heads, -1).transpose(0, 1)
        attn = torch.softmax(q @ k.transpose(1, 2), dim=-1) @ v
        return self.out_proj(attn.transpose(0, 1).reshape(length, batch, dim))
"""

# The same attention with no fused path first: the write runs on every call.
WITHOUT_FAST_PATH = ATTENTION.replace(
    "if self.use_fused and cache is None and not static_kv:", "if False:")

# The return's test is false at the defaults (the fused path only when asked for):
# a call at the defaults reaches the write.
FAST_PATH_ON_REQUEST = ATTENTION.replace(
    "def forward(self, query, cache=None, static_kv=False):",
    "def forward(self, query, cache=None, static_kv=False, fused=False):").replace(
    "if self.use_fused and cache is None and not static_kv:",
    "if self.use_fused and fused:")

# The flag some other method switches off: nothing shows the fused path is taken.
FLAG_SWITCHED_OFF_ELSEWHERE = ATTENTION.replace(
    "    def forward(self, query,",
    "    def prepare_for_export(self):\n        self.use_fused = False\n\n    def forward(self, query,")


def found(source: str, code: str):
    return [f.line for f in lint_source(source, filename="<string>", selection=Selection(select=("ALL",)))
            if f.code == code]


def line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def load(source: str, name: str):
    module = type(sys)(name)
    exec(compile(source, name, "exec"), module.__dict__)
    return module


def test_write_after_a_fused_fast_path_taken_at_the_defaults_is_silent_and_that_call_trains():
    assert found(ATTENTION, "ADL015") == []
    assert found(ATTENTION, "ADL001") == []
    module = load(ATTENTION, "set_ac_attention")
    torch.manual_seed(0)
    layer = module.Attention(8, 2)
    x = torch.randn(5, 3, 8, requires_grad=True)
    layer(x).sum().backward()  # the call at the defaults: the fused path, no write
    assert x.grad is not None and layer.in_proj_weight.grad is not None


def test_the_same_write_on_every_call_is_found_and_raises():
    assert found(WITHOUT_FAST_PATH, "ADL015") == [line_of(WITHOUT_FAST_PATH, "q *= self.scaling")]
    layer = load(WITHOUT_FAST_PATH, "set_ac_no_fast").Attention(8, 2)
    with pytest.raises(RuntimeError, match="returns multiple views"):
        layer(torch.randn(5, 3, 8))


def test_a_return_whose_test_is_false_at_the_defaults_keeps_the_finding():
    assert found(FAST_PATH_ON_REQUEST, "ADL015") == [line_of(FAST_PATH_ON_REQUEST, "q *= self.scaling")]
    layer = load(FAST_PATH_ON_REQUEST, "set_ac_on_request").Attention(8, 2)
    with pytest.raises(RuntimeError, match="returns multiple views"):
        layer(torch.randn(5, 3, 8))


def test_a_flag_another_method_can_switch_off_keeps_the_finding():
    assert found(FLAG_SWITCHED_OFF_ELSEWHERE, "ADL015") == [
        line_of(FLAG_SWITCHED_OFF_ELSEWHERE, "q *= self.scaling")]
    layer = load(FLAG_SWITCHED_OFF_ELSEWHERE, "set_ac_switched").Attention(8, 2)
    layer.prepare_for_export()
    with pytest.raises(RuntimeError, match="returns multiple views"):
        layer(torch.randn(5, 3, 8))


def test_the_suggested_out_of_place_write_makes_the_fallback_correct():
    fixed = WITHOUT_FAST_PATH.replace("q *= self.scaling", "q = q * self.scaling")
    assert found(fixed, "ADL015") == []
    torch.manual_seed(0)
    slow = load(fixed, "set_ac_fixed").Attention(8, 2)
    fast = load(ATTENTION, "set_ac_fast").Attention(8, 2)
    fast.load_state_dict(slow.state_dict())
    x = torch.randn(5, 3, 8, requires_grad=True)
    x2 = x.detach().clone().requires_grad_(True)
    out_slow, out_fast = slow(x), fast(x2)
    torch.testing.assert_close(out_slow, out_fast)
    out_slow.square().sum().backward()
    out_fast.square().sum().backward()
    torch.testing.assert_close(x.grad, x2.grad)
    torch.testing.assert_close(slow.in_proj_weight.grad, fast.in_proj_weight.grad)
