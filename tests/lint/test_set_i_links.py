"""Set I's ADL003 false alarms in DGL's examples (docs/lint.md, eleventh check),
each claim checked with torch:

* MVGRL: `model = LogReg(...)` after `embeds = model.get_embedding(...)` makes
  the optimizer built on `model` step the new classifier, not the encoder whose
  graph `embeds` holds (``_rebound`` follows the name back to the object it held
  at the call);
* RGCN: `node_embed = embed_layer()` once before the loop, where the module's
  `forward` returns its own `nn.ParameterDict`: leaves, no graph to go stale
  (``held_methods.returns_own_parameters``; the class is the one in the file's
  own folder, not a namesake in another example)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import torch

from autograd_doctor.lint.engine import lint_file

ENCODER = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(4, 8)
            self.fc2 = nn.Linear(8, 8)

        def get_embedding(self, x):
            return self.fc2(torch.tanh(self.fc1(x)))

    """)

# The encoder's name is given to a new classifier (then moved with `.to`, which
# keeps the object): the optimizer steps the classifier only.
REBOUND = ENCODER + textwrap.dedent("""\

    def linear_evaluation(model, feat, labels):
        train_embs = model.get_embedding(feat)
        losses = []
        for _ in range(2):
            torch.manual_seed(1)
            model = nn.Linear(8, 3)
            model = model.to(feat.device)
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            for epoch in range(3):
                opt.zero_grad()
                loss = nn.functional.cross_entropy(model(train_embs), labels)
                loss.backward(retain_graph=True)
                opt.step()
            losses.append(loss.item())
        return losses
    """)

# The same with the classifier under its own name: the optimizer steps the encoder,
# whose graph the next backward goes through.
SAME_OBJECT = ENCODER + textwrap.dedent("""\

    def linear_evaluation(model, feat, labels):
        train_embs = model.get_embedding(feat)
        torch.manual_seed(1)
        clf = nn.Linear(8, 3)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for epoch in range(3):
            opt.zero_grad()
            loss = nn.functional.cross_entropy(clf(train_embs), labels)
            loss.backward(retain_graph=True)
            opt.step()
        return loss.item()
    """)


def _write(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / name
    path.write_text(source)
    return path


def _adl003_lines(path: Path) -> list[int]:
    return [f.line for f in lint_file(str(path))[0] if f.code == "ADL003"]


def _run(source: str):
    namespace: dict = {}
    exec(compile(source, "<fixture>", "exec"), namespace)
    torch.manual_seed(0)
    encoder = namespace["Encoder"]()
    feat, labels = torch.randn(5, 4), torch.tensor([0, 1, 2, 0, 1])
    return namespace["linear_evaluation"](encoder, feat, labels)


def test_name_rebound_to_a_new_module_is_silent(tmp_path):
    assert _adl003_lines(_write(tmp_path, "rebound.py", REBOUND)) == []


def test_same_module_stepped_is_found(tmp_path):
    lines = _adl003_lines(_write(tmp_path, "same_object.py", SAME_OBJECT))
    step_line = SAME_OBJECT.splitlines().index("        opt.step()") + 1
    assert lines == [step_line]


def test_claims_hold_with_torch():
    losses = _run(REBOUND)  # the encoder is never stepped: every backward works
    assert len(losses) == 2 and losses[0] == losses[1]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _run(SAME_OBJECT)


EMBED_MODEL = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class NodeEmbed(nn.Module):
        def __init__(self, n, width):
            super().__init__()
            self.embeds = nn.ParameterDict()
            self.embeds["user"] = nn.Parameter(torch.randn(n, width))
            self.scale = nn.Parameter(torch.full((width,), 2.0))

        def forward(self):
            return {RETURNED}
    """)

# A namesake in another example, whose forward computes: not the class imported.
NAMESAKE = textwrap.dedent("""\
    import torch.nn as nn


    class NodeEmbed(nn.Module):
        def __init__(self, n, width):
            super().__init__()
            self.fc = nn.Linear(width, width)

        def forward(self, x):
            return self.fc(x)
    """)

EMBED_TRAINING = textwrap.dedent("""\
    import torch
    import torch.nn as nn
    from model import NodeEmbed


    def train(device):
        torch.manual_seed(0)
        embed_layer = NodeEmbed(6, 3)
        embed_layer = embed_layer.to(device)
        node_embed = embed_layer()
        head = nn.Linear(3, 1)
        optimizer = torch.optim.SGD(list(head.parameters()) + list(embed_layer.parameters()), lr=0.1)
        for nid in ([0, 1], [2, 3], [4, 5]):
            optimizer.zero_grad()
            loss = head(node_embed["user"][nid]).pow(2).sum()
            loss.backward(retain_graph=True)
            optimizer.step()
        return loss.item()
    """)

PARAMETERS = 'self.embeds'
COMPUTED = '{k: v * self.scale for k, v in self.embeds.items()}'


def _embed_repository(root: Path, returned: str) -> Path:
    (root / "rgcn").mkdir(parents=True)
    (root / "other").mkdir()
    (root / "setup.py").write_text("")
    (root / "rgcn" / "model.py").write_text(EMBED_MODEL.replace("{RETURNED}", returned))
    (root / "other" / "model.py").write_text(NAMESAKE)
    (root / "rgcn" / "train.py").write_text(EMBED_TRAINING)
    return root / "rgcn" / "train.py"


def _train(training_file: Path, monkeypatch):
    monkeypatch.syspath_prepend(str(training_file.parent))
    monkeypatch.delitem(__import__("sys").modules, "model", raising=False)
    namespace: dict = {}
    exec(compile(training_file.read_text(), str(training_file), "exec"), namespace)
    return namespace["train"]("cpu")


def test_module_returning_its_own_parameters_is_silent(tmp_path, monkeypatch):
    training_file = _embed_repository(tmp_path / "leaves", PARAMETERS)
    assert _adl003_lines(training_file) == []
    assert isinstance(_train(training_file, monkeypatch), float)  # every backward works


def test_module_computing_from_its_parameters_is_found(tmp_path, monkeypatch):
    training_file = _embed_repository(tmp_path / "computed", COMPUTED)
    step_line = EMBED_TRAINING.splitlines().index("        optimizer.step()") + 1
    assert _adl003_lines(training_file) == [step_line]
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        _train(training_file, monkeypatch)
