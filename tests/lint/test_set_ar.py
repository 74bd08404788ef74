"""Set AR (docs/lint.md, "A forty-sixth held-out check: set AR"): the false causes of
the first run fixed here, each with a false shape (silent), a second false shape
written before the change ran on it, a real shape of the same rule still found, and
a torch check that the real shape really fails.  None of the shapes is a copy of the
set's code:

- ADL038 in gordicaleksa/pytorch-original-transformer
  (https://github.com/gordicaleksa/pytorch-original-transformer, `training_script.py`):
  one epoch function runs `loss.backward()` only under `if is_train:`, and the
  validation call under `torch.no_grad()` passes `is_train=False`, so that call never
  reaches the backward.  The flag test was not read against the call's constant.
- ADL011 in jasonppy/VoiceCraft (https://github.com/jasonppy/VoiceCraft,
  `models/voicecraft.py`): inside `for b in range(batch_size):`, `samples[b, ...]` is
  written and then `prev_tokens[b] = samples[b, 0, 0]` keeps a view of that row; later
  iterations write other rows only, so no stored entry changes after its store.  Every
  write to the tensor in the loop counted as reaching every stored view.
- ADL001 in autogluon/autogluon (https://github.com/autogluon/autogluon,
  `multimodal/src/autogluon/multimodal/models/custom_hf_models/modeling_sam_for_conv_lora.py`):
  `queries = point_embeddings` before the layer loop, then `queries += target_embedding`
  and `queries, keys, _ = layer(queries=queries, ...)` in it: the write reaches
  `point_embeddings` only on the first iteration (the loop re-binds the alias after
  the write), so what a layer saved of `point_embeddings` is never overwritten.  The
  previous-iteration check looked at re-bindings of the aliased name only.
"""

from __future__ import annotations

import pytest
import torch

from autograd_doctor.lint.engine import Selection, lint_source


def _found(source, select=("ALL",)):
    return [(f.code, f.line) for f in lint_source(source, filename="<string>", selection=Selection(select=select))
            if f.code != "ADL000"]


def _load(source, name):
    namespace = {"__name__": name}
    exec(compile(source, f"<{name}>", "exec"), namespace)
    return namespace


def _line(source, text):
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


# --- ADL038: a flag parameter the call under no_grad passes as a constant ----------------

EPOCH_FACTORY = '''
import torch
from torch import nn


def make_epoch_runner(model, optimizer, criterion):
    def run_epoch(fitting, batches):
        total = 0.0
        for x, y in batches:
            out = model(x)
            loss = criterion(out, y)
            if fitting:
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            total += loss.item()
        return total

    return run_epoch


def fit(model, train_batches, val_batches, epochs):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    run_epoch = make_epoch_runner(model, optimizer, nn.MSELoss())
    for _ in range(epochs):
        run_epoch(fitting=True, batches=train_batches)
        with torch.no_grad():
            val = run_epoch(fitting=FLAG, batches=val_batches)
    return val
'''

POSITIONAL_AND_DEFAULT = '''
import torch
from torch import nn


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def pass_over(self, batches, update, every=1):
        total = 0.0
        for i, (x, y) in enumerate(batches):
            loss = nn.functional.mse_loss(self.model(x), y)
            if update and i % every == 0:
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            total += loss.item()
        return total


def score(model, batches, learn=False):
    loss = nn.functional.mse_loss(model(batches[0][0]), batches[0][1])
    if not learn:
        return loss.item()
    loss.backward()
    return loss.item()


def scores(model, batches):
    if learn_flag():
        pass
    with torch.no_grad():
        return score(model, batches)


def learn_flag():
    return False


def evaluate(trainer, batches):
    with torch.no_grad():
        return trainer.pass_over(batches, UPDATE)
'''


def _batches():
    torch.manual_seed(0)
    return [(torch.randn(4, 3), torch.randn(4, 2)) for _ in range(2)]


def test_adl038_call_passing_false_flag_is_silent():
    assert [c for c in _found(EPOCH_FACTORY.replace("FLAG", "False")) if c[0] == "ADL038"] == []


def test_adl038_positional_flag_and_method_are_silent():
    # written before the change ran on it: a method called with a positional `False`
    # (the first parameter, `self`, is the object), a flag in an `and` test
    source = POSITIONAL_AND_DEFAULT.replace("UPDATE", "False")
    assert [c for c in _found(source) if c[0] == "ADL038"] == []


def test_adl038_true_flag_or_unknown_flag_still_found():
    source = EPOCH_FACTORY.replace("FLAG", "True")
    assert ("ADL038", _line(source, "fitting=True, batches=val")) in _found(source)
    source = EPOCH_FACTORY.replace("FLAG", "not model.training")
    assert ("ADL038", _line(source, "fitting=not model.training")) in _found(source)
    source = POSITIONAL_AND_DEFAULT.replace("UPDATE", "True")
    assert ("ADL038", _line(source, "trainer.pass_over(batches, True)")) in _found(source)


def test_adl038_else_branch_of_a_flag_test():
    source = '''
import torch


def step(model, x, frozen):
    loss = model(x).sum()
    if frozen:
        return loss.item()
    else:
        loss.backward()
    return loss.item()


def check(model, x):
    with torch.no_grad():
        a = step(model, x, True)
        b = step(model, x, False)
    return a, b
'''
    assert [c for c in _found(source) if c[0] == "ADL038"] == [("ADL038", _line(source, "b = step("))]


def test_adl038_torch_true_flag_raises_false_flag_runs():
    model = torch.nn.Linear(3, 2)
    batches = _batches()
    real = _load(EPOCH_FACTORY.replace("FLAG", "True"), "ar_epoch_true")
    with pytest.raises(RuntimeError, match="does not require grad"):
        real["fit"](model, batches, batches, 1)
    fine = _load(EPOCH_FACTORY.replace("FLAG", "False"), "ar_epoch_false")
    assert isinstance(fine["fit"](model, batches, batches, 1), float)
    trainer_ns = _load(POSITIONAL_AND_DEFAULT.replace("UPDATE", "False"), "ar_trainer")
    assert isinstance(trainer_ns["evaluate"](trainer_ns["Trainer"](model), batches), float)
    assert isinstance(trainer_ns["scores"](model, batches), float)


# --- ADL011: a counter's own row, written before it is stored -------------------------

ROW_PICKS = '''
import torch


def pick_rows(scores, banned):
    picks = torch.zeros(scores.shape[0], 1, dtype=torch.long)
    last = [None] * scores.shape[0]
    for b in range(scores.shape[0]):
        picks[b, 0] = scores[b].argmax()
        if picks[b, 0] == banned:
            picks[b, 0] = 0
        last[b] = picks[b, 0]
    return picks, last


def running_rows(values, steps):
    history = []
    for _ in range(steps):
        buf = torch.zeros(values.shape[0])
        for i, v in enumerate(values):
            buf[i] = v * 2
            history.append(buf[i])
    return [float(h) for h in history]
'''

ROW_HAZARDS = '''
import torch


def shared_buffer(values, steps):
    buf = torch.zeros(values.shape[0])
    history = []
    for step in range(steps):
        for i in range(values.shape[0]):
            buf[i] = values[i] * step
            history.append(buf[i])
    return [float(h) for h in history]


def stored_then_written(values):
    buf = torch.zeros(values.shape[0])
    buf += values
    kept = []
    for i in range(values.shape[0]):
        kept.append(buf[i])
        buf[i] += 1
    return [float(k) for k in kept]


def whole_tensor_written(values):
    buf = torch.zeros(values.shape[0])
    buf += values
    kept = []
    for i in range(values.shape[0]):
        buf.mul_(2)
        kept.append(buf[i])
    return [float(k) for k in kept]
'''


def test_adl011_counter_row_written_before_store_is_silent():
    assert [c for c in _found(ROW_PICKS) if c[0] == "ADL011"] == []


def test_adl011_other_rows_and_repeated_rows_still_found():
    found = [c for c in _found(ROW_HAZARDS) if c[0] == "ADL011"]
    assert found == [("ADL011", _line(ROW_HAZARDS, "history.append(buf[i])")),
                     ("ADL011", _line(ROW_HAZARDS, "kept.append(buf[i])")),
                     ("ADL011", _line(ROW_HAZARDS, "buf.mul_(2)") + 1)]


def test_adl011_torch_rows_kept_vs_shared():
    silent = _load(ROW_PICKS, "ar_rows")
    scores = torch.tensor([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]])
    picks, last = silent["pick_rows"](scores, 1)
    assert [int(v) for v in last] == picks[:, 0].tolist() == [0, 0, 0]
    values = torch.tensor([1.0, 2.0])
    assert silent["running_rows"](values, 2) == [2.0, 4.0, 2.0, 4.0]
    real = _load(ROW_HAZARDS, "ar_row_hazards")
    # with a clone per entry the history would be [0, 0, 1, 2]: the first pass's
    # entries show the second pass's writes
    assert real["shared_buffer"](values, 2) == [1.0, 2.0, 1.0, 2.0]
    assert real["stored_then_written"](values) == [2.0, 3.0]  # clones: [1, 2]
    assert real["whole_tensor_written"](values) == [4.0, 8.0]  # clones: [2, 8]


# --- ADL001: a write through an alias the loop re-binds after the write --------------------

ALIAS_REBOUND = '''
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.mix = nn.Linear(d, d)

    def forward(self, tokens, memory, anchor):
        return self.mix(tokens) + anchor, memory


class Refiner(nn.Module):
    def __init__(self, d, depth):
        super().__init__()
        self.blocks = nn.ModuleList([Block(d) for _ in range(depth)])
        self.head = nn.Linear(d, d)

    def forward(self, anchor, memory, bias=None):
        tokens = anchor
        for block in self.blocks:
            if bias is not None:
                tokens += bias
            tokens, memory = block(tokens, memory, anchor)
        return tokens

    def smooth(self, anchor, steps):
        state = anchor
        for _ in range(steps):
            state.mul_(0.5)
            state = self.head(state)
        return state
'''

ALIAS_KEPT = '''
import torch
from torch import nn


class Smoother(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.head = nn.Linear(d, d)

    def forward(self, anchor, steps):
        state = anchor
        out = 0
        for _ in range(steps):
            state.mul_(0.5)
            out = out + self.head(state)
        return out
'''


def test_adl001_alias_rebound_after_write_is_silent():
    assert [c for c in _found(ALIAS_REBOUND) if c[0] == "ADL001"] == []


def test_adl001_alias_kept_or_rebound_before_write_still_found():
    found = [c for c in _found(ALIAS_KEPT) if c[0] == "ADL001"]
    lines = [i for i, line in enumerate(ALIAS_KEPT.splitlines(), 1) if "state.mul_(0.5)" in line]
    assert found == [("ADL001", line) for line in lines]


def test_adl001_torch_alias_rebound_runs_alias_kept_raises():
    torch.manual_seed(0)
    rebound = _load(ALIAS_REBOUND, "ar_alias_rebound")
    model = rebound["Refiner"](4, 3)
    anchor = torch.randn(2, 4) * model.head.weight.sum()  # a non-leaf with a graph
    model(anchor, torch.randn(2, 4), bias=torch.ones(2, 4)).sum().backward()
    model.smooth(torch.randn(2, 4) * model.head.weight.sum(), 3).sum().backward()
    kept = _load(ALIAS_KEPT, "ar_alias_kept")
    smoother = kept["Smoother"](4)
    anchor = torch.randn(2, 4) * smoother.head.weight.sum()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        smoother(anchor, 3).sum().backward()
