"""Held-out set 36's causes.

pytorch#90520: a full backward hook that runs its own `out.backward()`; autograd runs the hooks of a
backward pass with gradients off, so `out` has no grad_fn and the hook's call fails ("element 0 of
tensors does not require grad"). PyTorch raises through the outer backward(), and AD301 blamed the
outer loss ("has no grad_fn", advice). Now, when the error's traceback shows the failing call in a
user function that the engine of the outer backward() called (a hook), the hook's variables hold a
tensor or a module that requires grad and the outer call has no create_graph, AD301 names the hook's
call and runs the statements that build what it differentiates under `torch.enable_grad()`. Tested
on the set-36 case and on another shape written before the change was run on it (a tensor hook that
takes `torch.autograd.grad` of a weight penalty); the hand-written versions run silent.

mobile-vod-bottleneck-lstm#25: a module keeps its LSTM state; backward(retain_graph=True) and step()
run every frame, and the program's `net.detach_hidden()` runs once per clip, after the frame loop.
AD103 named step() with advice. Now, when every module state that reaches the node that saved the
stepped weight is detached by the method called right after the inner loop (its `.detach_()` or a
`.detach()` assigned), AD103 names that call and moves it to the end of the inner loop's body (the
same forward values). Tested on the set-36 case and on another shape written before the change was
run on it (a GRU cell's `self.h`, `repackage()` assigning `self.h.detach()`, SGD with momentum); the
hand-written versions run silent."""

from __future__ import annotations

import os
import sys
import textwrap

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "errors"))

from catalogue import apply_suggestion, run_plain, run_watched, write  # noqa: E402

import autograd_doctor  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SET36 = os.path.join(os.path.dirname(HERE), "bug_reports", "fresh", "set36")
HOOK = "a_backward_called_inside_a_full_backward_hook.py"
LSTM = "a_bottleneck_lstm_state_detached_once_per_clip_not_per_frame.py"

TENSOR_HOOK = '''
import torch
import torch.nn as nn

torch.manual_seed(2)

encoder = nn.Linear(6, 5)
head = nn.Linear(5, 3)
penalties = []


def weight_norm_grad(grad):
    w = head.weight
    s = (w * w).sum() * grad.abs().mean()
    g, = torch.autograd.grad(s, w)
    penalties.append(g)
    return grad


x = torch.randn(4, 6)
features = encoder(x)
features.register_hook(weight_norm_grad)
loss = head(features).pow(2).mean()
loss.backward()

result = {"penalty": penalties[0], "enc": encoder.weight.grad.clone(), "head": head.weight.grad.clone()}
'''

TENSOR_HOOK_CORRECT = '''
import torch
import torch.nn as nn

torch.manual_seed(2)

encoder = nn.Linear(6, 5)
head = nn.Linear(5, 3)
penalties = []


def weight_norm_grad(grad):
    with torch.enable_grad():
        w = head.weight
        s = (w * w).sum() * grad.abs().mean()
        g, = torch.autograd.grad(s, w)
    penalties.append(g)
    return grad


x = torch.randn(4, 6)
features = encoder(x)
features.register_hook(weight_norm_grad)
loss = head(features).pow(2).mean()
loss.backward()

result = {"penalty": penalties[0], "enc": encoder.weight.grad.clone(), "head": head.weight.grad.clone()}
'''

GRU = '''
import torch
import torch.nn as nn

torch.manual_seed(1)


class CharModel(nn.Module):
    def __init__(self, vocab=12, hidden=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, 8)
        self.cell = nn.GRUCell(8, hidden)
        self.out = nn.Linear(hidden, vocab)
        self.h = torch.zeros(4, hidden)

    def forward(self, tokens):
        self.h = self.cell(self.embed(tokens), self.h)
        return self.out(self.h)

    def repackage(self):
        self.h = self.h.detach()


model = CharModel()
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
stream = torch.randint(0, 12, (2, 5, 4))
history = []
for epoch in range(2):
    for step in range(4):
        logits = model(stream[epoch, step])
        loss = nn.functional.cross_entropy(logits, stream[epoch, step + 1])
        opt.zero_grad()
        loss.backward(retain_graph=True)
        opt.step()
        history.append(loss.detach())
    model.repackage()

result = {"history": torch.stack(history), "params": [p.detach().clone() for p in model.parameters()]}
'''

GRU_CORRECT = '''
import torch
import torch.nn as nn

torch.manual_seed(1)


class CharModel(nn.Module):
    def __init__(self, vocab=12, hidden=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, 8)
        self.cell = nn.GRUCell(8, hidden)
        self.out = nn.Linear(hidden, vocab)
        self.h = torch.zeros(4, hidden)

    def forward(self, tokens):
        self.h = self.cell(self.embed(tokens), self.h)
        return self.out(self.h)

    def repackage(self):
        self.h = self.h.detach()


model = CharModel()
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
stream = torch.randint(0, 12, (2, 5, 4))
history = []
for epoch in range(2):
    for step in range(4):
        logits = model(stream[epoch, step])
        loss = nn.functional.cross_entropy(logits, stream[epoch, step + 1])
        opt.zero_grad()
        loss.backward(retain_graph=True)
        opt.step()
        history.append(loss.detach())
        model.repackage()

result = {"history": torch.stack(history), "params": [p.detach().clone() for p in model.parameters()]}
'''


def _diagnose(path, code):
    error = run_watched(path)
    assert error is not None
    (found,) = [d for d in autograd_doctor.diagnoses_of(error) if d.code == code]
    return found


def _fixed_result(folder, path, suggestion):
    target = folder / ("fixed_" + os.path.basename(path))
    target.write_text(apply_suggestion(open(path).read(), suggestion))
    error, namespace = run_plain(str(target))
    assert error is None, error
    return namespace["result"]


def _close(a, b):
    if isinstance(a, torch.Tensor):
        return torch.allclose(a, b, rtol=1e-5, atol=1e-6)
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))


def _hand_written(tmp_path, source):
    folder = tmp_path / "hand"
    folder.mkdir(exist_ok=True)
    error, namespace = run_plain(write(folder, source, "program"))
    assert error is None, error
    return namespace["result"]


def test_set36_backward_inside_a_full_backward_hook(tmp_path):
    path = os.path.join(SET36, "cases", HOOK)
    found = _diagnose(path, "AD301")
    assert found.primary.line == 27
    assert any("gradients off" in note for note in found.notes)
    suggestion = found.help[0]
    assert suggestion.location.line == 25 and suggestion.location.end_line == 27
    assert suggestion.replacement.splitlines()[0] == "with torch.enable_grad():"
    fixed = _fixed_result(tmp_path, path, suggestion)
    _, correct = run_plain(os.path.join(SET36, "correct", HOOK))
    assert _close(fixed, correct["result"])


def test_tensor_hook_taking_autograd_grad(tmp_path):
    path = write(tmp_path, textwrap.dedent(TENSOR_HOOK), "program")
    found = _diagnose(path, "AD301")
    assert found.primary.line == 15
    suggestion = found.help[0]
    assert (suggestion.location.line, suggestion.location.end_line) == (13, 15)
    fixed = _fixed_result(tmp_path, path, suggestion)
    assert _close(fixed, _hand_written(tmp_path, textwrap.dedent(TENSOR_HOOK_CORRECT)))


def test_set36_state_detached_once_per_clip(tmp_path):
    path = os.path.join(SET36, "cases", LSTM)
    found = _diagnose(path, "AD103")
    assert found.primary.line == 110
    suggestion = found.help[0]
    assert (suggestion.location.line, suggestion.location.end_line) == (109, 110)
    assert suggestion.replacement.splitlines() == ["losses.append(loss.detach())", "net.detach_hidden()"]
    assert suggestion.cuts_carried_graph  # --verify-fix: unverified (the oracle keeps the carried graph)
    fixed = _fixed_result(tmp_path, path, suggestion)
    _, correct = run_plain(os.path.join(SET36, "correct", LSTM))
    assert _close(fixed, correct["result"])


def test_gru_state_repackaged_once_per_epoch(tmp_path):
    path = write(tmp_path, textwrap.dedent(GRU), "program")
    found = _diagnose(path, "AD103")
    assert found.primary.line == 36
    suggestion = found.help[0]
    assert (suggestion.location.line, suggestion.location.end_line) == (35, 36)
    fixed = _fixed_result(tmp_path, path, suggestion)
    assert _close(fixed, _hand_written(tmp_path, textwrap.dedent(GRU_CORRECT)))


def test_hand_written_versions_are_silent(tmp_path):
    assert run_watched(os.path.join(SET36, "correct", HOOK)) is None
    assert run_watched(os.path.join(SET36, "correct", LSTM)) is None
    assert run_watched(write(tmp_path, textwrap.dedent(TENSOR_HOOK_CORRECT), "hook")) is None
    assert run_watched(write(tmp_path, textwrap.dedent(GRU_CORRECT), "gru")) is None
