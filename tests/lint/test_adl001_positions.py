"""ADL001's graph evidence per argument position (docs/lint.md, set AN's section,
"ADL001's argument positions (stop 44, round 2)").

Set AN's first run had 4 false ADL001 findings with one cause: a parameter counted
as carrying a graph when some caller passed a graph at ANY position.  TracKit
(https://github.com/researchmm/TracKit, `lib/models/online/classifier/initializer.py`):
`FilterPool.forward(feat, bb)` writes a clone of its box argument after `.prod()`,
and its holder calls `self.filter_pool(feat, bb)`: a layer's output at position 0
only, the holder's own (data) box argument at position 1.  SOTS
(https://github.com/JudasDie/SOTS, `lib/models/mot/loss.py`): `build_targets(p,
targets, model)`, called from a loss module's forward with the loader's targets.

The shapes below are not those repositories' code: a box pool held by a head, a loss
helper that scales its targets in a loop, a trainer method called with a graph at
position 0 only; each false shape runs and backpropagates under torch, and each real
twin (the graph passed at the written position) raises.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

from autograd_doctor.lint.engine import Selection, lint_source


def _found(source):
    return [(f.code, f.line) for f in lint_source(source, filename="<string>",
                                                   selection=Selection(select=("ADL001",)))
            if f.code != "ADL000"]


def _load(source, name):
    namespace = {"__name__": name}
    exec(compile(source, f"<{name}>", "exec"), namespace)
    return namespace


def _line(source, text):
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


FALSE_BOX_POOL = '''
import torch
from torch import nn


class BoxPool(nn.Module):
    def __init__(self, square=True):
        super().__init__()
        self.square = square

    def forward(self, features, boxes):
        rois = boxes.clone()
        if self.square:
            side = rois[:, 2:4].prod(dim=1, keepdim=True).sqrt()
            rois[:, 2:4] = side
        weights = torch.softmax(rois, dim=1)
        return features * weights.sum(dim=1, keepdim=True)


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(4, 4)
        self.pool = BoxPool()

    def forward(self, x, boxes):
        h = self.enc(x)
        return self.pool(h, boxes)


def main():
    model = Head()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(2):
        x, boxes = torch.randn(3, 4), torch.rand(3, 4) + 0.1
        loss = model(x, boxes).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
'''


REAL_BOX_POOL = '''
import torch
from torch import nn


class BoxPool(nn.Module):
    def __init__(self, square=True):
        super().__init__()
        self.square = square

    def forward(self, features, boxes):
        rois = boxes.clone()
        if self.square:
            side = rois[:, 2:4].prod(dim=1, keepdim=True).sqrt()
            rois[:, 2:4] = side
        weights = torch.softmax(rois, dim=1)
        return features * weights.sum(dim=1, keepdim=True)


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(4, 4)
        self.pool = BoxPool()
        self.refine = nn.Linear(4, 4)

    def forward(self, x, boxes):
        h = self.enc(x)
        return self.pool(h, self.refine(boxes))


def main():
    model = Head()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(2):
        x, boxes = torch.randn(3, 4), torch.rand(3, 4) + 1.0
        loss = model(x, boxes).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
'''


FALSE_LOSS_TARGETS = '''
import torch
from torch import nn


def scale_targets(pred, targets, strides):
    gain = torch.ones(4)
    targets = torch.stack([row for row in targets])
    out = []
    for s in strides:
        gain[2:4] = s
        scaled = targets * gain
        out.append(((pred - scaled) ** 2).mean())
    return out


class BoxLoss(nn.Module):
    def forward(self, pred, targets):
        return sum(scale_targets(pred, targets, (1.0, 2.0)))

'''


REAL_LOSS_TARGETS = '''
import torch
from torch import nn


def scale_targets(pred, targets, strides):
    gain = torch.ones(4)
    targets = torch.stack([row for row in targets])
    out = []
    for s in strides:
        gain[2:4] = s
        scaled = targets * gain
        out.append(((pred - scaled) ** 2).mean())
    return out


class Distiller(nn.Module):
    def __init__(self):
        super().__init__()
        self.student = nn.Linear(4, 4)
        self.teacher = nn.Linear(4, 4)

    def forward(self, x):
        return sum(scale_targets(self.student(x), self.teacher(x), (1.0, 2.0)))

'''


FALSE_METHOD_POS0 = '''
import torch
from torch import nn


class Trainer:
    def __init__(self):
        self.model = nn.Linear(4, 4)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)

    def gate(self, scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        soft = mask.sigmoid()
        soft[mask < 0] = 0.0
        return scores * soft

    def step(self, x, mask):
        loss = self.gate(self.model(x), mask).sum()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()


def main():
    trainer = Trainer()
    for _ in range(2):
        trainer.step(torch.randn(3, 4), torch.randn(3, 4))
'''


REAL_METHOD_POS1 = '''
import torch
from torch import nn


class Trainer:
    def __init__(self):
        self.model = nn.Linear(4, 4)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)

    def gate(self, scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        soft = mask.sigmoid()
        soft[mask < 0] = 0.0
        return scores * soft

    def step(self, x, mask):
        loss = self.gate(x, self.model(mask)).sum()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()


def main():
    trainer = Trainer()
    for _ in range(2):
        trainer.step(torch.randn(3, 4), torch.randn(3, 4))
'''


# written after the change, in shapes it was not tuned on: keywords, two levels of parts

FALSE_KW = '''
import torch
from torch import nn


class BoxPool(nn.Module):
    def __init__(self, square=True):
        super().__init__()
        self.square = square

    def forward(self, features, boxes):
        rois = boxes.clone()
        if self.square:
            side = rois[:, 2:4].prod(dim=1, keepdim=True).sqrt()
            rois[:, 2:4] = side
        weights = torch.softmax(rois, dim=1)
        return features * weights.sum(dim=1, keepdim=True)


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(4, 4)
        self.pool = BoxPool()

    def forward(self, x, boxes):
        h = self.enc(x)
        return self.pool(features=h, boxes=boxes)


def main():
    model = Head()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(2):
        x, boxes = torch.randn(3, 4), torch.rand(3, 4) + 0.1
        loss = model(x, boxes).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
'''


REAL_KW = '''
import torch
from torch import nn


class BoxPool(nn.Module):
    def __init__(self, square=True):
        super().__init__()
        self.square = square

    def forward(self, features, boxes):
        rois = boxes.clone()
        if self.square:
            side = rois[:, 2:4].prod(dim=1, keepdim=True).sqrt()
            rois[:, 2:4] = side
        weights = torch.softmax(rois, dim=1)
        return features * weights.sum(dim=1, keepdim=True)


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(4, 4)
        self.pool = BoxPool()
        self.refine = nn.Linear(4, 4)

    def forward(self, x, boxes):
        h = self.enc(x)
        return self.pool(features=h, boxes=self.refine(boxes))


def main():
    model = Head()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(2):
        x, boxes = torch.randn(3, 4), torch.rand(3, 4) + 1.0
        loss = model(x, boxes).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
'''


FALSE_TWO_LEVELS = '''
import torch
from torch import nn


class BoxPool(nn.Module):
    def __init__(self, square=True):
        super().__init__()
        self.square = square

    def forward(self, features, boxes):
        rois = boxes.clone()
        if self.square:
            side = rois[:, 2:4].prod(dim=1, keepdim=True).sqrt()
            rois[:, 2:4] = side
        weights = torch.softmax(rois, dim=1)
        return features * weights.sum(dim=1, keepdim=True)


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(4, 4)
        self.pool = BoxPool()

    def forward(self, x, boxes):
        h = self.enc(x)
        return self.pool(h, boxes)



class Tracker(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(4, 4)
        self.head = Head()

    def forward(self, x, boxes):
        return self.head(self.backbone(x), boxes)


def main():
    model = Tracker()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(2):
        x, boxes = torch.randn(3, 4), torch.rand(3, 4) + 0.1
        loss = model(x, boxes).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
'''


REAL_TWO_LEVELS = '''
import torch
from torch import nn


class BoxPool(nn.Module):
    def __init__(self, square=True):
        super().__init__()
        self.square = square

    def forward(self, features, boxes):
        rois = boxes.clone()
        if self.square:
            side = rois[:, 2:4].prod(dim=1, keepdim=True).sqrt()
            rois[:, 2:4] = side
        weights = torch.softmax(rois, dim=1)
        return features * weights.sum(dim=1, keepdim=True)


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(4, 4)
        self.pool = BoxPool()

    def forward(self, x, boxes):
        h = self.enc(x)
        return self.pool(h, boxes)



class Tracker(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(4, 4)
        self.head = Head()
        self.box_net = nn.Linear(4, 4)

    def forward(self, x, boxes):
        return self.head(self.backbone(x), self.box_net(boxes) + 1.0)


def main():
    model = Tracker()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(2):
        x, boxes = torch.randn(3, 4), torch.rand(3, 4) + 0.1
        loss = model(x, boxes).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
'''


def _train_loss_module(ns, real):
    if real:
        model = ns["Distiller"]()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(2):
            loss = model(torch.randn(3, 4))
            opt.zero_grad()
            loss.backward()
            opt.step()
        return
    net, criterion = nn.Linear(4, 4), ns["BoxLoss"]()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    for _ in range(2):
        loss = criterion(net(torch.randn(3, 4)), torch.rand(3, 4))
        opt.zero_grad()
        loss.backward()
        opt.step()


def _run(name, source):
    ns = _load(source, name)
    if "main" in ns:
        ns["main"]()
    else:
        _train_loss_module(ns, real=name.startswith("real"))


FALSE = {"false_box_pool": FALSE_BOX_POOL, "false_loss_targets": FALSE_LOSS_TARGETS,
         "false_method_pos0": FALSE_METHOD_POS0, "false_kw": FALSE_KW,
         "false_two_levels": FALSE_TWO_LEVELS}
REAL = {"real_box_pool": (REAL_BOX_POOL, "rois[:, 2:4] = side"),
        "real_loss_targets": (REAL_LOSS_TARGETS, "gain[2:4] = s"),
        "real_method_pos1": (REAL_METHOD_POS1, "soft[mask < 0] = 0.0"),
        "real_kw": (REAL_KW, "rois[:, 2:4] = side"),
        "real_two_levels": (REAL_TWO_LEVELS, "rois[:, 2:4] = side")}


@pytest.mark.parametrize("name", sorted(FALSE))
def test_data_at_the_written_position_is_silent(name):
    assert _found(FALSE[name]) == []


@pytest.mark.parametrize("name", sorted(REAL))
def test_a_graph_at_the_written_position_is_found(name):
    source, text = REAL[name]
    assert _found(source) == [("ADL001", _line(source, text))]


@pytest.mark.parametrize("name", sorted(FALSE))
def test_false_shapes_backpropagate_under_torch(name):
    _run(name, FALSE[name])


@pytest.mark.parametrize("name", sorted(REAL))
def test_real_shapes_raise_under_torch(name):
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _run(name, REAL[name][0])
