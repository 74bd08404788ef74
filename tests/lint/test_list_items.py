"""A Python list's item rebound, taken for an in-place tensor write (docs/lint.md,
"Fixes after set R: a list's item rebound taken for a tensor write").

A detection head's usual `forward` replaces each feature map of the list it is
given by its convolution's output: `for i in range(self.nl): x[i] =
self.m[i](x[i])` (YOLOP's `Detect.forward`, https://github.com/hustvl/YOLOP,
`lib/models/common.py`; yolov5-face's, https://github.com/deepcam-cn/yolov5-face,
`models/yolo.py`).  ADL001 took the unannotated argument `x` for a tensor and
the assignment for a write into the tensor the convolution saved.  The
argument's own uses are the evidence (container_arguments.py): indexed only
with integer constants or loop counters, asked its `len()`, `.append()`ed to,
or returned as is, it is a sequence; any use as a tensor keeps it a tensor.

Each claim is run with torch: the silent heads run forward and backward and
equal a hand-written out-of-place version; the reported forms really raise
"modified by an inplace operation".  Also ADL019's help for a list or a tuple
of recurrent states, which have no `.detach()`."""

from __future__ import annotations

import textwrap

import pytest
import torch

from autograd_doctor.lint import lint_source


def _findings(source: str) -> list[tuple[int, str]]:
    return [(f.line, f.code) for f in lint_source(source, "list_items.py")]


def _namespace(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "list_items.py", "exec"), namespace)
    return namespace


def _line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


# Each head is held by `Model`, so its forward's arguments carry a graph for the linter.
HEADS = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Detect(nn.Module):
        def __init__(self, nc=2, anchors=((1, 2, 3, 4), (5, 6, 7, 8)), ch=(4, 6)):
            super().__init__()
            self.no = nc + 5
            self.nl = len(anchors)
            self.na = len(anchors[0]) // 2
            self.m = nn.ModuleList(nn.Conv2d(c, self.no * self.na, 1) for c in ch)

        def forward(self, x):
            z = []
            for i in range(self.nl):
                x[i] = self.m[i](x[i])
                bs, _, ny, nx = x[i].shape
                x[i] = x[i].view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
                if not self.training:
                    z.append(x[i].sigmoid().view(bs, -1, self.no))
            return x if self.training else (torch.cat(z, 1), x)


    class Pyramid(nn.Module):
        def __init__(self, ch=(4, 6)):
            super().__init__()
            self.lateral = nn.ModuleList(nn.Conv2d(c, 3, 1) for c in ch)
            self.extra = nn.Conv2d(3, 3, 3, stride=2, padding=1)

        def forward(self, feats):
            for i in range(len(feats)):
                feats[i] = torch.relu(self.lateral[i](feats[i]))
            feats.append(self.extra(feats[-1]))
            return feats


    class Stages(nn.Module):
        def __init__(self, ch=(4, 6)):
            super().__init__()
            self.blocks = nn.ModuleList(nn.Conv2d(c, c, 3, padding=1) for c in ch)

        def forward(self, outs):
            for i in range(len(self.blocks)):
                outs[i] = torch.sigmoid(self.blocks[i](outs[i])) + outs[i]
            return outs[0], outs


    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.detect = Detect()
            self.pyramid = Pyramid()
            self.stages = Stages()
""")


def _feature_maps(seed: int) -> list:
    generator = torch.Generator().manual_seed(seed)
    return [torch.randn(2, 4, 5, 5, generator=generator, requires_grad=True),
            torch.randn(2, 6, 3, 3, generator=generator, requires_grad=True)]


def test_list_heads_are_silent():
    assert _findings(HEADS) == []


@pytest.mark.parametrize("head", ["detect", "pyramid", "stages"])
def test_list_heads_run_and_equal_an_out_of_place_version(head):
    """The element rebinding writes no tensor: forward and backward run, and
    outputs and gradients equal a version that builds a new list."""
    torch.manual_seed(0)
    model = _namespace(HEADS)["Model"]()
    module = getattr(model, head)

    def reference(maps):
        if head == "detect":
            outs = []
            for i, conv in enumerate(module.m):
                y = conv(maps[i])
                bs, _, ny, nx = y.shape
                outs.append(y.view(bs, module.na, module.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous())
            return outs
        if head == "pyramid":
            outs = [torch.relu(conv(m)) for conv, m in zip(module.lateral, maps)]
            return outs + [module.extra(outs[-1])]
        return [torch.sigmoid(block(m)) + m for block, m in zip(module.blocks, maps)]

    maps, reference_maps = _feature_maps(1), _feature_maps(1)
    result = module(list(maps))
    outs = result[1] if head == "stages" else result
    expected = reference(reference_maps)
    assert len(outs) == len(expected)
    for out, want in zip(outs, expected):
        assert torch.equal(out, want)
    sum(o.square().sum() for o in outs).backward()
    grads = [p.grad.clone() for p in module.parameters()] + [m.grad for m in maps]
    module.zero_grad()
    sum(o.square().sum() for o in expected).backward()
    for got, want in zip(grads, [p.grad for p in module.parameters()] + [m.grad for m in reference_maps]):
        assert torch.equal(got, want)


# The same shape on a tensor: a torch op's result, and an argument used as a tensor.
TENSORS = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Saved(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

        def forward(self, h):
            x = torch.sigmoid(h)
            for i in range(2):
                x[i] = self.fc(x[i])
            return x


    class UsedAsTensor(nn.Module):
        def __init__(self):
            super().__init__()
            self.n = 2
            self.fcs = nn.ModuleList(nn.Linear(4, 4) for _ in range(2))

        def forward(self, x):
            for i in range(self.n):
                x[i] = self.fcs[i](x[i])
            return x * 2


    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.saved = Saved()
            self.used = UsedAsTensor()
""")


def test_tensor_forms_are_still_reported():
    assert _findings(TENSORS) == [(_line_of(TENSORS, "x[i] = self.fc(x[i])"), "ADL001"),
                                  (_line_of(TENSORS, "x[i] = self.fcs[i](x[i])"), "ADL001")]
    help_text = lint_source(TENSORS, "list_items.py")[0].message
    assert "`x` is modified in place (an indexed assignment)" in help_text


@pytest.mark.parametrize("part", ["saved", "used"])
def test_tensor_forms_really_raise(part):
    model = _namespace(TENSORS)["Model"]()
    h = torch.randn(3, 4, requires_grad=True)
    x = h * 1.0  # a graph tensor, as another layer's output
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        getattr(model, part)(x).sum().backward()


# ADL019: recurrent states carried into the next iteration, a list and a tuple of them.
STATES = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Stack(nn.Module):
        def __init__(self):
            super().__init__()
            self.cells = nn.ModuleList(nn.GRUCell(3, 3) for _ in range(2))

        def forward(self, x, states):
            new_states = []
            for cell, h in zip(self.cells, states):
                x = cell(x, h)
                new_states.append(x)
            return x, KIND(new_states)


    def train(batches):
        torch.manual_seed(0)
        model = Stack()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        states = KIND(torch.zeros(4, 3) for _ in range(2))
        for x, y in batches:
            out, states = model(x, states)
            loss = ((out - y) ** 2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            DETACH
        return model
""")


@pytest.mark.parametrize("kind, help_form", [("list", "[s.detach() for s in states]"),
                                             ("tuple", "tuple(s.detach() for s in states)")])
def test_states_container_gets_an_elementwise_detach(kind, help_form):
    source = STATES.replace("KIND", kind).replace("DETACH", "pass")
    findings = lint_source(source, "states.py")
    assert [(f.line, f.code) for f in findings] == [(_line_of(source, "loss.backward()"), "ADL019")]
    assert f"(`states = {help_form}`)" in findings[0].message
    assert "states.detach()`" not in findings[0].message.replace(help_form, "")

    generator = torch.Generator().manual_seed(2)
    batches = [(torch.randn(4, 3, generator=generator), torch.randn(4, 3, generator=generator))
               for _ in range(3)]
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        _namespace(source)["train"](batches)
    # `states.detach()` itself fails on a container
    with pytest.raises(AttributeError, match="has no attribute 'detach'"):
        _namespace(STATES.replace("KIND", kind).replace("DETACH", "states = states.detach()"))["train"](batches)

    fixed = STATES.replace("KIND", kind).replace("DETACH", f"states = {help_form}")
    assert _findings(fixed) == []
    trained = _namespace(fixed)["train"](batches)
    # the same training written by hand: each state detached between batches
    torch.manual_seed(0)
    reference = _namespace(fixed)["Stack"]()
    optimizer = torch.optim.SGD(reference.parameters(), lr=0.1)
    hs = [torch.zeros(4, 3) for _ in range(2)]
    for x, y in batches:
        inp, new = x, []
        for cell, h in zip(reference.cells, hs):
            inp = cell(inp, h)
            new.append(inp)
        loss = ((inp - y) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        hs = [h.detach() for h in new]
    for got, want in zip(trained.parameters(), reference.parameters()):
        assert torch.equal(got, want)


def test_tensor_state_keeps_the_detach_help():
    source = STATES.replace("KIND(torch.zeros(4, 3) for _ in range(2))", "torch.zeros(4, 3)") \
        .replace("KIND(new_states)", "x").replace("KIND", "list").replace("DETACH", "pass") \
        .replace("for cell, h in zip(self.cells, states):", "for cell in self.cells:") \
        .replace("x = cell(x, h)", "x = cell(x, states)")
    findings = lint_source(source, "states.py")
    assert [f.code for f in findings] == ["ADL019"]
    assert "(`states = states.detach()`)" in findings[0].message


# An element replaced by a module's output carries its graph: a tensor computed from
# it and then written in place is still reported (the list is no tensor, its elements are).
ELEMENT = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Detect(nn.Module):
        def __init__(self, ch=(4, 6)):
            super().__init__()
            self.nl = len(ch)
            self.m = nn.ModuleList(nn.Conv2d(c, 6, 1) for c in ch)

        def forward(self, x):
            z = []
            for i in range(self.nl):
                x[i] = self.m[i](x[i])
                y = x[i].sigmoid()
                y[..., 0:2] = y[..., 0:2] * 2.0
                z.append(y)
            return z


    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.detect = Detect()
""")


def test_write_into_what_an_element_computed_is_still_reported():
    assert _findings(ELEMENT) == [(_line_of(ELEMENT, "y[..., 0:2] = "), "ADL001")]
    model = _namespace(ELEMENT)["Model"]()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        sum(o.sum() for o in model.detect(_feature_maps(3))).backward()


# YOLOv7's heads (jedi008/TestPyTorch, `easyYoLoV7/models/heads.py`, read in stop 49: the frozen
# rules reported its `x[i] = self.m[i](x[i])` lines) put the list into a name in each branch and
# return that name: `out = x` in training, `out = (torch.cat(z, 1), x)` otherwise, then `return
# out`. A name only ever returned as is hands `x` on untouched, as `return x` does.
HOLDER_HEAD = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Detect(nn.Module):
        def __init__(self, ch=(4, 6)):
            super().__init__()
            self.nl = len(ch)
            self.m = nn.ModuleList(nn.Conv2d(c, 7, 1) for c in ch)

        def forward(self, x):
            z = []
            for i in range(self.nl):
                x[i] = self.m[i](x[i])  # ELEMENT
                if not self.training:
                    z.append(x[i].flatten(1))
            if self.training:
                out = x
            else:
                out = (torch.cat(z, 1), x)
            return out


    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.detect = Detect()
""")
# The same head whose holder is used as a tensor (`out.sum(0)`): `x` may be a tensor there, and the
# element write is a write into what the convolution saved.
HOLDER_USED_AS_TENSOR = HOLDER_HEAD.replace("        return out\n", "        return out.sum(0)\n")


def test_a_list_handed_on_through_a_returned_name_is_silent_and_runs():
    assert _findings(HOLDER_HEAD) == []
    module = _namespace(HOLDER_HEAD)["Model"]().detect
    maps = _feature_maps(2)
    outs = module(list(maps))
    expected = [conv(m) for conv, m in zip(module.m, maps)]
    assert all(torch.equal(out, want) for out, want in zip(outs, expected))
    sum(o.square().sum() for o in outs).backward()  # the element replacement writes no tensor


def test_a_holder_used_as_a_tensor_keeps_the_write_reported():
    assert (_line_of(HOLDER_USED_AS_TENSOR, "# ELEMENT"), "ADL001") in _findings(HOLDER_USED_AS_TENSOR)
