"""Set Q (docs/lint.md, nineteenth check).  The set's first run had no false
alarm; the six repositories fetched with it and left out had ten, from two
general causes:

* ADL001 on GraphRNN's GraphSAGE (https://github.com/snap-stanford/GraphRNN,
  `model.py`): `forward(self, nodes_list, nodes_count_list)` is given a Python
  list of tensors and replaces its elements, `nodes_list[0] =
  self.linear_projection(nodes_list[0])`.  Every forward() argument was taken
  for a tensor, so that read as an indexed write into the tensor the layer
  saved.  A function that only ever indexes the argument with integer
  constants treats it as a sequence (``container_arguments.py``).
* ADL003 on FedRep's local update (https://github.com/lgcollins/FedRep,
  `models/Update.py`): `hidden = net.init_hidden(bs)`, then
  `net.load_state_dict(w)` and a backward through `net(data, hidden)`.  The
  method was taken for a computation from `net`'s parameters; the
  repository's `init_hidden` returns `weight.new_zeros(...)` with `weight =
  next(self.parameters())`: fresh zeros, no graph (``held_methods.py``).

Each claim below is run with torch: the reported code really fails, the silent
code runs, and its values equal a reference written by hand."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest
import torch
import torch.nn as nn

from autograd_doctor.lint import lint_source
from autograd_doctor.lint.engine import lint_file


def _codes(source: str) -> list[tuple[int, str]]:
    return [(f.line, f.code) for f in lint_source(source, "set_q.py")]


def _namespace(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "set_q.py", "exec"), namespace)
    return namespace


def _line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


# ----- ADL001: a forward() argument that is a list of tensors ---------------

# GraphRNN's shape: the argument is only ever indexed with integer constants.
LIST_ARGUMENT = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class HopEncoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.projection = nn.Linear(3, 4)
            self.hop_far = nn.Linear(4, 4)
            self.hop_near = nn.Linear(4, 4)

        def forward(self, nodes_list):
            nodes_list[0] = self.projection(nodes_list[0])
            far = self.hop_far(nodes_list[0]).mean(0)
            nodes_list[1] = self.projection(nodes_list[1])
            near = self.hop_near(nodes_list[1]).mean(0)
            return far + near
    """)

# The same element write where the function also uses the argument whole: a tensor,
# and `projection` saved the row that the write then changes.
TENSOR_ARGUMENT = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class HopEncoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.projection = nn.Linear(3, 3)

        def forward(self, nodes):
            first = self.projection(nodes[0])
            nodes[0] = first
            return nodes.mean(0) + first
    """)


def _nodes():
    torch.manual_seed(0)
    return [torch.randn(5, 3), torch.randn(2, 3)]


def test_a_list_argument_whose_elements_are_replaced_is_silent_and_matches_a_reference():
    assert _codes(LIST_ARGUMENT) == []
    torch.manual_seed(1)
    model = _namespace(LIST_ARGUMENT)["HopEncoder"]()
    model(_nodes()).sum().backward()
    got = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    far_nodes, near_nodes = _nodes()  # the same computation without replacing elements
    far = model.hop_far(model.projection(far_nodes)).mean(0)
    near = model.hop_near(model.projection(near_nodes)).mean(0)
    (far + near).sum().backward()
    for mine, reference in zip(got, [p.grad for p in model.parameters()]):
        assert torch.equal(mine, reference)


def test_the_same_write_into_a_tensor_argument_is_reported_and_raises():
    assert _codes(TENSOR_ARGUMENT) == [(_line_of(TENSOR_ARGUMENT, "nodes[0] = first"), "ADL001")]
    model = _namespace(TENSOR_ARGUMENT)["HopEncoder"]()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        model(torch.randn(4, 3)).sum().backward()


# ----- ADL003: a module method that only makes new tensors -----------------

# FedRep's model file: the word-language-model `init_hidden`.
RNN_MODEL = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class RNNModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.LSTM(3, 5)
            self.out = nn.Linear(5, 2)
            self.h0 = nn.Parameter(torch.full((1, 1, 5), 0.1))

        def init_hidden(self, bsz):
            weight = next(self.parameters())
            return (weight.new_zeros(1, bsz, 5), weight.new_zeros(1, bsz, 5))

        def forward(self, x, hidden):
            output, hidden = self.rnn(x, hidden)
            return self.out(output), hidden
    """)

# The same class whose `init_hidden` computes from a parameter (sin keeps it).
LEARNED_HIDDEN = "return (torch.sin(self.h0).expand(1, bsz, 5), torch.sin(self.h0).expand(1, bsz, 5))"

# FedRep's update, in another file: the method's receiver is a parameter, its class
# unknown here.
UPDATE = textwrap.dedent("""
    import torch

    def train(net, batches, start_weights, lr=0.1):
        optimizer = torch.optim.SGD(net.parameters(), lr=lr)
        for data in batches:
            hidden = net.init_hidden(data.shape[1])
            net.load_state_dict(start_weights)
            output, hidden = net(data, hidden)
            loss = output.pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        return net
    """)


def _repository(root: Path, init_hidden: str | None = None) -> Path:
    model = RNN_MODEL if init_hidden is None else RNN_MODEL.replace(
        "return (weight.new_zeros(1, bsz, 5), weight.new_zeros(1, bsz, 5))", init_hidden)
    (root / "models").mkdir(parents=True)
    (root / "setup.py").write_text("")
    (root / "models" / "nets.py").write_text(model)
    (root / "models" / "update.py").write_text(UPDATE)
    return root / "models"


def _adl003_lines(path: Path) -> list[int]:
    return [f.line for f in lint_file(str(path))[0] if f.code == "ADL003"]


def _load(folder: Path, monkeypatch):
    monkeypatch.syspath_prepend(str(folder))
    for name in ("nets", "update"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    return __import__("nets").RNNModel, __import__("update").train


def _batches():
    torch.manual_seed(2)
    return [torch.randn(4, 2, 3) for _ in range(3)]


def test_a_hidden_state_made_with_new_zeros_is_silent_and_matches_a_reference(tmp_path, monkeypatch):
    folder = _repository(tmp_path / "zeros")
    assert _adl003_lines(folder / "update.py") == []
    model_class, train = _load(folder, monkeypatch)
    torch.manual_seed(3)
    net = model_class()
    start = {k: v.clone() for k, v in net.state_dict().items()}
    trained = train(net, _batches(), start)
    reference = model_class()  # by hand: zeros for the state, one SGD step from `start`
    reference.load_state_dict(start)
    data = _batches()[-1]
    output, _ = reference(data, (torch.zeros(1, 2, 5), torch.zeros(1, 2, 5)))
    output.pow(2).mean().backward()
    with torch.no_grad():
        for p in reference.parameters():
            if p.grad is not None:  # `h0` is unused here; SGD skips it too
                p.add_(p.grad, alpha=-0.1)
    for mine, expected in zip(trained.parameters(), reference.parameters()):
        assert torch.equal(mine, expected)


def test_a_hidden_state_computed_from_a_parameter_is_reported_and_raises(tmp_path, monkeypatch):
    folder = _repository(tmp_path / "learned", LEARNED_HIDDEN)
    assert _adl003_lines(folder / "update.py") == [_line_of(UPDATE, "net.load_state_dict")]
    model_class, train = _load(folder, monkeypatch)
    net = model_class()
    start = {k: v.clone() for k, v in net.state_dict().items()}
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        train(net, _batches(), start)
