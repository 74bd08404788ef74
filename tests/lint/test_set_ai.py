"""Set AI's false findings (docs/lint.md, "A thirty-seventh held-out check: set AI"): one
cause, now a link ADL028 needs evidence for.  The programs are written for these tests
(not copied), in shapes other than the set's.

- ADL028, "every iteration's graph stays alive and memory grows with the iteration
  count": LibFewShot's fine-tuning methods (https://github.com/RL-VIG/LibFewShot,
  `core/model/finetuning/baseline.py` and three copies) loop `for i in
  range(episode_size)` with `episode_size = support_feat.size(0)`, append the prediction
  of a classifier trained per episode, and `torch.cat` the list right after the loop.
  The list holds the parts of one result for the slices of one tensor in hand; nothing
  in it outlives the joined value.  A loop over a loader, a `range` with a step (batches
  of a data set in memory) or a list kept on the object is still found.
"""

from __future__ import annotations

import sys

import pytest
import torch

from autograd_doctor.lint.engine import Selection, lint_source

PER_SLICE_STACK = '''
import torch
from torch import nn


class PerSampleAdapter(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(8, 8)

    def adapt_one(self, x):
        head = nn.Linear(8, 3)
        opt = torch.optim.SGD(head.parameters(), lr=0.1)
        for _ in range(3):
            opt.zero_grad()
            loss = head(x).logsumexp(-1).mean()
            loss.backward()
            opt.step()
        return head(x)

    def predict(self, xs):
        with torch.no_grad():
            feats = self.encoder(xs)
        count = feats.shape[0]
        preds = []
        for k in range(count):
            preds.append(self.adapt_one(feats[k]))
        return torch.stack(preds, 0)
'''

PER_ROW_CAT = '''
import torch
from torch import nn


class RowTrainer:
    def __init__(self):
        self.model = nn.Linear(4, 2)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)

    def step(self, row):
        self.opt.zero_grad()
        out = self.model(row)
        out.pow(2).mean().backward()
        self.opt.step()
        return out

    def run(self, rows):
        parts = []
        for i in range(rows.size(0)):
            out = self.step(rows[i:i + 1])
            parts.append(out)
        joined = torch.cat(parts, dim=0)
        return joined
'''

TRAINER = '''
import torch
from torch import nn


class Trainer:
    def __init__(self):
        self.model = nn.Linear(4, 2)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.history = []

    def train_step(self, x):
        self.opt.zero_grad()
        out = self.model(x)
        out.pow(2).mean().backward()
        self.opt.step()
        return out
'''

LOADER_CAT = TRAINER + '''
    def fit(self, batches):
        outs = []
        for x in batches:
            outs.append(self.train_step(x))
        return torch.cat(outs)
'''

RANGE_KEPT = TRAINER + '''
    def fit(self, data):
        for i in range(data.size(0)):
            out = self.train_step(data[i])
            self.history.append(out)
        return self.history
'''

RANGE_STEP_CAT = TRAINER + '''
    def fit(self, data, batch_size):
        outs = []
        for i in range(0, data.size(0), batch_size):
            outs.append(self.train_step(data[i:i + batch_size]))
        return torch.cat(outs)
'''


def found(source: str, code: str):
    return [f.line for f in lint_source(source, filename="<string>", selection=Selection(select=("ALL",)))
            if f.code == code]


def line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def load(source: str, name: str):
    module = type(sys)(name)
    exec(compile(source, name, "exec"), module.__dict__)
    return module


def graphs_held(obj) -> int:
    """Tensors with a graph that the object keeps after the call."""
    held = 0
    for value in vars(obj).values():
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, torch.Tensor) and item.grad_fn is not None:
                held += 1
    return held


def test_slices_of_one_tensor_stacked_into_one_result_are_silent_and_nothing_is_kept():
    assert found(PER_SLICE_STACK, "ADL028") == []
    torch.manual_seed(0)
    adapter = load(PER_SLICE_STACK, "lib_set_ai_stack").PerSampleAdapter()
    out = adapter.predict(torch.randn(5, 2, 8))
    assert out.shape == (5, 2, 3)
    assert graphs_held(adapter) == 0  # the list died with the call; only the result has a graph


def test_rows_of_one_tensor_concatenated_after_the_loop_are_silent():
    assert found(PER_ROW_CAT, "ADL028") == []
    trainer = load(PER_ROW_CAT, "lib_set_ai_rows").RowTrainer()
    out = trainer.run(torch.randn(6, 4))
    assert out.shape == (6, 2)
    assert graphs_held(trainer) == 0


@pytest.mark.parametrize("source, name, keep", [
    (LOADER_CAT, "lib_set_ai_loader", "outs.append(self.train_step(x))"),
    (RANGE_KEPT, "lib_set_ai_kept", "self.history.append(out)"),
    (RANGE_STEP_CAT, "lib_set_ai_step", "outs.append(self.train_step(data[i:i + batch_size]))"),
])
def test_graphs_kept_across_a_loop_of_steps_are_still_found_and_detach_frees_them(source, name, keep):
    assert found(source, "ADL028") == [line_of(source, keep)]
    trainer = load(source, name).Trainer()
    data = torch.randn(4, 3, 4)
    if "batch_size" in source:
        result = trainer.fit(data.reshape(12, 4), 3)
    elif "batches" in source:
        result = trainer.fit(list(data))
    else:
        result = trainer.fit(data)
    kept = result if isinstance(result, list) else [result]
    assert all(t.grad_fn is not None for t in kept)  # every step's graph is alive
    # the help applied: keep `.detach()` of it
    fixed_source = source.replace("self.train_step(x))", "self.train_step(x).detach())") \
        .replace("self.history.append(out)", "self.history.append(out.detach())") \
        .replace("self.train_step(data[i:i + batch_size]))", "self.train_step(data[i:i + batch_size]).detach())")
    assert found(fixed_source, "ADL028") == []
    fixed = load(fixed_source, name + "_fixed").Trainer()
    torch.manual_seed(1)
    if "batch_size" in source:
        again = fixed.fit(data.reshape(12, 4), 3)
    elif "batches" in source:
        again = fixed.fit(list(data))
    else:
        again = fixed.fit(data)
    kept = again if isinstance(again, list) else [again]
    assert all(t.grad_fn is None for t in kept)
