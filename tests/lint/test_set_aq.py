"""Set AQ (docs/lint.md, "A forty-fifth held-out check: set AQ"): 13 default findings
beside ADL000, 2 real, 8 debatable, 3 false.  The two false causes fixed here, each
with a false shape (silent), a second false shape written before the change ran on
it, a real shape still found, and a torch check.  None of the shapes is a copy of
the set's code:

- ADL016 in opendilab/LightZero (https://github.com/opendilab/LightZero,
  `lzero/model/unizero_world_models/transformer.py`): `adapter = nn.ParameterDict(...)`
  appended to an `nn.ModuleList` in `__init__`, then `for adapter in self.adapters:
  adapter['lora_A'].requires_grad = False` in another method: the item is a
  parameter, and the assignment freezes it.  The appended name's constructor was
  not read, so the loop variable was a module of unknown class and its item a module.
- ADL023 in yuanzhi-zhu/mini_edm (https://github.com/yuanzhi-zhu/mini_edm,
  `train_edm.py`): `batch_loss = torch.tensor(0.0, device=device)` before a counted
  accumulation window, `batch_loss += loss` after each micro-batch's backward, then
  the step: the total spans one step's micro-batches.  Only a literal start (`= 0`)
  counted as starting the total again.
"""

from __future__ import annotations

import torch
from torch import nn

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


# --- ADL016: an item of a parameter container appended by name -------------------------

LORA_STAGES = '''
import torch
from torch import nn


class StagedLinear(nn.Module):
    def __init__(self, n, m, stages):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(m, n))
        self.adapters = nn.ModuleList()
        for _ in range(stages):
            adapter = nn.ParameterDict({
                "down": nn.Parameter(torch.randn(2, n) * 0.01),
                "up": nn.Parameter(torch.zeros(m, 2)),
            })
            self.adapters.append(adapter)

    def start_stage(self, stage):
        for index, adapter in enumerate(self.adapters):
            adapter["down"].requires_grad = index == stage
            adapter["up"].requires_grad = index == stage

    def freeze_adapters(self):
        for adapter in self.adapters:
            adapter["down"].requires_grad = False
            adapter["up"].requires_grad = False

    def forward(self, x):
        out = x @ self.weight.t()
        for adapter in self.adapters:
            out = out + (x @ adapter["down"].t()) @ adapter["up"].t()
        return out
'''

SCALE_LISTS = '''
import torch
from torch import nn


class ScaledHeads(nn.Module):
    def __init__(self, n, k):
        super().__init__()
        self.heads = nn.ModuleList()
        for _ in range(k):
            scales = nn.ParameterList([nn.Parameter(torch.ones(n)), nn.Parameter(torch.zeros(n))])
            self.heads.append(scales)

    def freeze_gains(self):
        for scales in self.heads:
            scales[0].requires_grad = False

    def forward(self, x):
        return sum(x * scales[0] + scales[1] for scales in self.heads)
'''

BLOCK_DICTS = '''
import torch
from torch import nn


class Blocks(nn.Module):
    def __init__(self, n, k):
        super().__init__()
        self.blocks = nn.ModuleList()
        for _ in range(k):
            block = nn.ModuleDict({"fc": nn.Linear(n, n), "norm": nn.LayerNorm(n)})
            self.blocks.append(block)

    def freeze_linear(self):
        for block in self.blocks:
            block["fc"].requires_grad = False

    def forward(self, x):
        for block in self.blocks:
            x = block["norm"](block["fc"](x))
        return x
'''


def test_parameter_dict_item_appended_by_name_is_silent():
    assert _found(LORA_STAGES) == []


def test_parameter_list_item_appended_by_name_is_silent():
    assert _found(SCALE_LISTS) == []


def test_module_dict_item_appended_by_name_is_still_found():
    assert _found(BLOCK_DICTS) == [("ADL016", _line(BLOCK_DICTS, 'block["fc"].requires_grad'))]


def test_torch_parameter_items_are_frozen_module_items_are_not():
    lora = _load(LORA_STAGES, "lora_stages")["StagedLinear"](3, 4, 2)
    lora.freeze_adapters()
    assert not any(p.requires_grad for adapter in lora.adapters for p in adapter.values())
    heads = _load(SCALE_LISTS, "scale_lists")["ScaledHeads"](3, 2)
    heads.freeze_gains()
    assert [scales[0].requires_grad for scales in heads.heads] == [False, False]
    blocks = _load(BLOCK_DICTS, "block_dicts")["Blocks"](3, 2)
    blocks.freeze_linear()
    # the assignment sets an attribute on the Linear module: nothing is frozen
    assert all(p.requires_grad for block in blocks.blocks for p in block["fc"].parameters())
    blocks(torch.randn(2, 3)).sum().backward()
    assert all(block["fc"].weight.grad is not None for block in blocks.blocks)


# --- ADL023: an accumulation window's total started again as a factory tensor ---------

WINDOW_FACTORY_START = '''
import torch
from torch import nn


def train(model, batches, steps, accumulation_steps, device):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    data = iter(batches)
    logged = 0.0
    for step in range(steps):
        optimizer.zero_grad()
        batch_loss = torch.tensor(0.0, device=device)
        for _ in range(accumulation_steps):
            x, y = next(data)
            loss = nn.functional.mse_loss(model(x), y) / accumulation_steps
            loss.backward()
            batch_loss += loss
        optimizer.step()
        logged += batch_loss.item()
    return logged
'''

WINDOW_ZEROS_START = '''
import torch
from torch import nn


def fit(net, draw, updates, micro):
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    history = []
    for update in range(updates):
        window = torch.zeros(())
        for k in range(micro):
            inputs, targets = draw()
            part = nn.functional.l1_loss(net(inputs), targets) / micro
            part.backward()
            window = window + part
        opt.step()
        opt.zero_grad()
        history.append(window.item())
    return history
'''

EPOCH_FACTORY_START = '''
import torch
from torch import nn


def train(model, loader, epochs):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        epoch_loss = torch.tensor(0.0)
        for x, y in loader:
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
            epoch_loss += loss
        print(epoch, epoch_loss.item())
'''


def test_window_total_started_as_factory_tensor_is_silent():
    assert _found(WINDOW_FACTORY_START) == []


def test_window_total_started_as_zeros_is_silent():
    assert _found(WINDOW_ZEROS_START) == []


def test_epoch_total_started_as_factory_tensor_is_still_found():
    assert _found(EPOCH_FACTORY_START) == [("ADL023", _line(EPOCH_FACTORY_START, "epoch_loss += loss"))]


def _graph_size(tensor):
    """How many autograd nodes the tensor's history holds."""
    seen, work = set(), [tensor.grad_fn]
    while work:
        node = work.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        work.extend(next_node for next_node, _ in node.next_functions)
    return len(seen)


def test_torch_window_total_holds_one_step_epoch_total_holds_every_batch():
    torch.manual_seed(0)
    batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(12)]

    def window_sizes(accumulation_steps):
        model, sizes = nn.Linear(3, 1), []
        data = iter(batches)
        for step in range(12 // accumulation_steps):
            batch_loss = torch.tensor(0.0)
            for _ in range(accumulation_steps):
                x, y = next(data)
                loss = nn.functional.mse_loss(model(x), y) / accumulation_steps
                loss.backward()
                batch_loss += loss
            sizes.append(_graph_size(batch_loss))
        return sizes

    # a window's total never outgrows its micro-batches, step after step
    assert len(set(window_sizes(3))) == 1
    model, epoch_loss, sizes = nn.Linear(3, 1), torch.tensor(0.0), []
    for x, y in batches:
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        epoch_loss += loss
        sizes.append(_graph_size(epoch_loss))
    # the epoch's total grows with every batch it adds
    assert sizes == sorted(sizes) and sizes[-1] > sizes[0] + 10
