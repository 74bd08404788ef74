"""Held-out set 37, part B: its causes.

opacus#432: the optimizer is built, then a helper of the user's program swaps every BatchNorm2d of
the model for a GroupNorm; the optimizer steps the old parameters and the new layers never train.
AD207 found it and its first help (build the optimizer again after the helper's call) was right, but
the primary location was the replacing `setattr` inside the helper, while the line to change is the
helper's call in the function that built the optimizer, where the help writes. Now, when the first
help offered is that rebuild (no copy or load of the new values applies at the replacing line) and
the replacement ran in a function called from the optimizer's function, the primary location is
that call; the replacing line stays as a related location. Tested on the set-37 case and on another
shape written before the change was run on it (a fine-tuning `train()` whose `replace_head()` helper
swaps the classifier for a wider one, Adam); the hand-written versions run silent."""

from __future__ import annotations

import os

import torch

from helpers import apply_replacement, run_plain, run_program

HERE = os.path.dirname(os.path.abspath(__file__))
SET37 = os.path.join(os.path.dirname(HERE), "bug_reports", "fresh", "set37")
NORMS = "b_private_model_norm_layers_replaced_after_optimizer_built.py"

FINE_TUNE = '''
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(3)


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(6, 12), nn.Tanh())
        self.classifier = nn.Linear(12, 2)

    def forward(self, x):
        return self.classifier(self.body(x))


def replace_head(net, n_classes):
    net.classifier = nn.Linear(net.classifier.in_features, n_classes)


def train(net, data, labels, epochs=3):
    opt = torch.optim.Adam(net.parameters(), lr=0.01)
    replace_head(net, 4)
    history = []
    for epoch in range(epochs):
        loss = F.cross_entropy(net(data), labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
        history.append(loss.detach())
    return torch.stack(history)


net = Backbone()
data = torch.randn(8, 6)
labels = torch.tensor([0, 1, 2, 3, 0, 1, 2, 3])
history = train(net, data, labels)
result = {"history": history, "params": [p.detach().clone() for p in net.parameters()]}
'''

FINE_TUNE_HAND = FINE_TUNE.replace(
    "    opt = torch.optim.Adam(net.parameters(), lr=0.01)\n    replace_head(net, 4)\n",
    "    replace_head(net, 4)\n    opt = torch.optim.Adam(net.parameters(), lr=0.01)\n")


def _close(a, b):
    if isinstance(a, torch.Tensor):
        return torch.allclose(a, b, rtol=1e-5, atol=1e-6)
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))


def _ad207(outcome):
    found = [d for d in outcome.diagnoses if d.code == "AD207"]
    assert len(found) == 1, [d.code for d in outcome.diagnoses]
    return found[0]


def _line(source: str, text: str) -> int:
    return source.splitlines().index(text) + 1


def test_set37_norm_swap_names_the_helpers_call_and_the_help_is_right(tmp_path):
    source = open(os.path.join(SET37, "cases", NORMS)).read()
    outcome = run_program(tmp_path, source)
    found = _ad207(outcome)
    call = _line(outcome.source, "model = fix_for_privacy(model)")
    assert found.primary.line == call
    assert any(r.role == "replaced" and "setattr" in outcome.source.splitlines()[r.line - 1]
               for r in found.related)
    suggestion = found.help[0]
    assert suggestion.location.line == call
    assert suggestion.replacement.splitlines() == [
        "model = fix_for_privacy(model)", "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)"]
    fixed = run_plain(tmp_path, apply_replacement(outcome.source, suggestion.location, suggestion.replacement))
    correct = run_plain(tmp_path, open(os.path.join(SET37, "correct", NORMS)).read(), "hand.py")
    assert _close(fixed["result"], correct["result"])


def test_head_replaced_in_a_helper_of_train_names_the_call(tmp_path):
    outcome = run_program(tmp_path, FINE_TUNE)
    found = _ad207(outcome)
    call = _line(outcome.source, "    replace_head(net, 4)")
    assert found.primary.line == call
    assert any(r.role == "replaced" for r in found.related)
    suggestion = found.help[0]
    assert suggestion.location.line == call
    fixed = run_plain(tmp_path, apply_replacement(outcome.source, suggestion.location, suggestion.replacement))
    hand = run_plain(tmp_path, FINE_TUNE_HAND, "hand.py")
    assert _close(fixed["result"], hand["result"])


def test_hand_written_versions_are_silent(tmp_path):
    for source in (open(os.path.join(SET37, "correct", NORMS)).read(), FINE_TUNE_HAND):
        outcome = run_program(tmp_path, source)
        assert outcome.error is None
        assert outcome.diagnoses == []
