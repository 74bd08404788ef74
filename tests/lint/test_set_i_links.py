"""Set I's false alarm in DGL's MVGRL example (docs/lint.md, eleventh check):
`model = LogReg(...)` after `embeds = model.get_embedding(...)` makes the
optimizer built on `model` step the new classifier, not the encoder whose
graph `embeds` holds.  ADL003 follows the name back to the object it held at
the call (`_rebound`); both claims are checked with torch."""

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
