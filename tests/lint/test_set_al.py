"""Set AL (docs/lint.md, "A fortieth held-out check: set AL"): 3 default findings,
all false, and 1 opt-in finding, false; each "no graph, but taken for one":

- ADL040 in TabPFN's `tabpfn/tests/test_get_gradients.py`
  (https://github.com/automl/TabPFN): `x = x.detach() - rate * x.grad` then
  `x.requires_grad = True`.  `.grad`, filled by a backward without
  `create_graph=True`, carries no graph (nor does `.data`), so the new tensor is a
  leaf and the flag may be set.
- ADL001 in Open3D-ML's KPConv (https://github.com/isl-org/Open3D-ML,
  `ml3d/torch/models/kpconv.py`): `neighb_inds.gather(1, rows)` then
  `rows.unsqueeze_(2)`, `neighb_inds` being the batch's integer neighbour index
  that `forward` also uses as an index (`s_pts[neighb_inds, :]`).  A tensor used as
  an index is integer or bool and never requires grad: the gather records nothing.
- ADL031 (opt-in) in se3-transformer-public
  (https://github.com/FabianFuchsML/se3-transformer-public,
  `experiments/toy_optimisation/opt_run.py`): an evaluation loop keeping
  `to_np(loss)`, `to_np` being another file's `return x.cpu().detach().numpy()`.

The programs below are written for these tests in shapes not taken from the set
(a PGD-style input loop, a graph-conv block indexing with `edges[0]`, a helper named
otherwise in the same file and in a package), each with a near-twin where the link
is there and the finding must stay.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
import torch
from torch import nn

from autograd_doctor.lint.engine import Selection, lint_source


def _found(source, filename="<string>", select=("ALL",)):
    return [(f.code, f.line) for f in lint_source(source, filename=filename, selection=Selection(select=select))
            if f.code != "ADL000"]


def _load(source, name, tmp_path=None):
    namespace = {"__name__": name}
    exec(compile(source, f"<{name}>", "exec"), namespace)
    return namespace


# --- ADL040: `.grad` / `.data` carry no graph -------------------------------------

STEP_ON_DETACHED = '''
import torch
import torch.nn.functional as F


def attack(model, x, y, alpha=0.01, k=3):
    delta = torch.zeros_like(x, requires_grad=True)
    for _ in range(k):
        loss = F.cross_entropy(model(x + delta), y)
        loss.backward()
        delta = delta.detach() + alpha * delta.grad.sign()
        delta.requires_grad = True
    return delta


def fit_input(f, z, steps=3):
    z = torch.zeros(3, requires_grad=True)
    for _ in range(steps):
        err = f(z).sum()
        err.backward()
        z = z.data - 0.1 * z.grad
        z.requires_grad = True
    return z
'''

STEP_ON_GRAPH = STEP_ON_DETACHED.replace(
    "delta = delta.detach() + alpha * delta.grad.sign()", "delta = delta + alpha * delta.grad.sign()")


def test_a_step_from_detached_value_and_grad_is_silent():
    assert [c for c, _ in _found(STEP_ON_DETACHED) if c == "ADL040"] == []


def test_a_step_from_the_graph_value_is_still_found_with_its_help():
    findings = [f for f in lint_source(STEP_ON_GRAPH) if f.code == "ADL040"]
    assert [f.line for f in findings] == [12]
    assert "retain_grad()" in findings[0].message and "line 11" in findings[0].message


def test_the_grad_of_a_create_graph_backward_still_counts_as_a_graph():
    source = STEP_ON_DETACHED.replace("loss.backward()", "loss.backward(create_graph=True)")
    assert ("ADL040", 12) in _found(source)


def _attack_torch(source):
    torch.manual_seed(0)
    model = nn.Linear(4, 3)
    x, y = torch.randn(2, 4), torch.tensor([0, 2])
    return _load(source, "adl040")["attack"](model, x, y)


def test_torch_agrees_the_silent_shape_runs_and_the_found_one_raises():
    assert _attack_torch(STEP_ON_DETACHED).is_leaf
    with pytest.raises(RuntimeError, match="leaf variables"):
        _attack_torch(STEP_ON_GRAPH)


def test_the_help_applied_gives_the_hand_written_attack():
    fixed = _attack_torch(STEP_ON_GRAPH.replace("delta.requires_grad = True", "delta.retain_grad()"))
    torch.manual_seed(0)
    model = nn.Linear(4, 3)
    x, y = torch.randn(2, 4), torch.tensor([0, 2])
    delta = torch.zeros_like(x)
    for _ in range(3):
        d = delta.clone().requires_grad_(True)
        (g,) = torch.autograd.grad(nn.functional.cross_entropy(model(x + d), y), d)
        delta = delta + 0.01 * g.sign()
    assert torch.equal(fixed.detach(), delta)


# --- ADL001: a parameter used as an index is an integer tensor ---------------------

INDEX_ARGUMENT = '''
import torch
from torch import nn


class EdgeConv(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, h, edges):
        msg = self.lin(h)[edges[0]]
        score = (msg.sum(-1) > 0).long()
        perm = torch.argsort(score)
        kept = torch.index_select(edges, 1, perm)
        perm.clamp_(max=0)
        kept *= 2
        return self.lin(msg).sum(0) + kept.float().mean()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = EdgeConv()

    def forward(self, h, batch):
        edges = batch.graphs[0]
        return self.conv(h, edges)
'''

INDEX_OF_GRAPH = INDEX_ARGUMENT.replace("kept = torch.index_select(edges, 1, perm)",
                                        "kept = torch.index_select(msg.sum(-1), 0, perm)")

ROW_INDEX = '''
import torch
from torch import nn


class KP(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(3))

    def forward(self, pts, inds, x):
        nb = pts[inds, :]
        d = ((nb - self.w) ** 2).sum(-1)
        vals, rows = torch.topk((d < 1.0).type(torch.int32), 2, dim=1)
        new_inds = inds.gather(1, rows)
        rows.unsqueeze_(2)
        new_inds *= vals
        return x[new_inds].sum() + d.sum()


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.kp = KP()

    def forward(self, x, batch):
        return self.kp(batch.points, batch.neighbors[0], x)
'''


@pytest.mark.parametrize("source", [INDEX_ARGUMENT, ROW_INDEX], ids=["index_select", "gather"])
def test_an_op_on_an_index_argument_is_silent(source):
    assert [c for c, _ in _found(source) if c == "ADL001"] == []


def test_the_same_op_on_the_graph_is_still_found():
    findings = [f for f in lint_source(INDEX_OF_GRAPH) if f.code == "ADL001"]
    assert [f.line for f in findings] == [16]
    assert "`perm` is modified in place" in findings[0].message


def test_an_index_argument_rebound_in_the_function_keeps_its_evidence():
    source = INDEX_OF_GRAPH.replace("        msg = self.lin(h)[edges[0]]\n",
                                    "        msg = self.lin(h)[edges[0]]\n        edges = edges * 1\n")
    assert ("ADL001", 17) in _found(source)


class _Batch:
    def __init__(self):
        self.graphs = [torch.randint(0, 5, (2, 7))]


def _net(source):
    torch.manual_seed(0)
    net = _load(source, "adl001")["Net"]()
    torch.manual_seed(1)
    h, batch = torch.randn(5, 4), _Batch()
    return net, h, batch


def test_torch_agrees_the_index_shape_runs_and_the_graph_one_raises():
    net, h, batch = _net(INDEX_ARGUMENT)
    net(h, batch).sum().backward()
    net, h, batch = _net(INDEX_OF_GRAPH)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        net(h, batch).sum().backward()


def test_the_write_made_out_of_place_gives_the_hand_written_gradients():
    net, h, batch = _net(INDEX_OF_GRAPH.replace("perm.clamp_(max=0)", "perm = perm.clamp(max=0)"))
    net(h, batch).sum().backward()
    got = [p.grad.clone() for p in net.parameters()]
    net2, h, batch = _net(INDEX_ARGUMENT)
    lin = net2.conv.lin
    msg = lin(h)[batch.graphs[0][0]]
    perm = torch.argsort((msg.sum(-1) > 0).long())
    (lin(msg).sum(0) + torch.index_select(msg.sum(-1), 0, perm).float().mean() * 2).sum().backward()
    for a, b in zip(got, (p.grad for p in net2.parameters())):
        assert torch.allclose(a, b)


# --- ADL031 (opt-in): a helper that detaches ---------------------------------------

SAME_FILE_HELPER = '''
import torch
from torch import nn


def to_host(t):
    return t.detach().cpu()


def validate(net, loader):
    net.eval()
    outs = []
    for x in loader:
        pred = net(x)
        outs.append(to_host(pred))
    return torch.cat(outs)
'''

SAME_FILE_KEEPS = SAME_FILE_HELPER.replace("return t.detach().cpu()", "return t.cpu()")

EVALUATE = '''
import numpy as np
from torch import nn
from pkg.tools import as_array


def evaluate(model, batches):
    model.eval()
    scores = []
    for x, y in batches:
        out = model(x)
        scores.append(as_array(nn.functional.mse_loss(out, y)))
    return float(np.mean(scores))
'''


def test_a_same_file_helper_that_detaches_is_silent():
    assert _found(SAME_FILE_HELPER, select=("ADL031",)) == []
    assert _found(SAME_FILE_KEEPS, select=("ADL031",)) == [("ADL031", 14)]


@pytest.mark.parametrize("body,found", [("return t.detach().cpu().numpy()", []),
                                        ("return t.cpu()", [("ADL031", 11)])])
def test_a_helper_of_another_file(tmp_path, body, found):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "tools.py").write_text(f"def as_array(t):\n    {body}\n")
    path = os.fspath(tmp_path / "evaluate.py")
    (tmp_path / "evaluate.py").write_text(EVALUATE)
    assert _found(EVALUATE, filename=path, select=("ADL031",)) == found


def test_torch_agrees_what_the_helpers_keep():
    net = nn.Linear(3, 3)
    ns = _load(SAME_FILE_HELPER, "adl031")
    assert ns["validate"](net, [torch.randn(2, 3)]).grad_fn is None
    ns = _load(SAME_FILE_KEEPS, "adl031")
    assert ns["validate"](net, [torch.randn(2, 3)]).grad_fn is not None
    with torch.no_grad():  # the help applied: the kept outputs carry no graph
        assert ns["validate"](net, [torch.randn(2, 3)]).grad_fn is None
