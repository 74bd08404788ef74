"""A module method that every call in the repository makes without gradients is
not checked for ADL001 in a file without backward passes
(lint/repository_callers.py).  Each claim is checked with torch: called as the
repository calls it (under `torch.no_grad()`) the method runs; called with
gradients and backpropagated, the same method fails, and a repository that does
that keeps the report."""

from __future__ import annotations

import importlib.util
import textwrap

import pytest
import torch

from autograd_doctor.lint.engine import lint_file

DETECTOR = textwrap.dedent("""\
    import torch
    import torch.nn as nn


    class Detector(nn.Module):
        def __init__(self):
            super().__init__()
            self.head = nn.Conv2d(3, 2, kernel_size=1)

        def forward(self, x):
            return self.head(x)

        def decode_peaks(self, x):
            scores = torch.sigmoid(self.head(x))
            peaks = nn.functional.max_pool2d(scores, kernel_size=3, padding=1, stride=1)
            scores *= (peaks == scores).float()
            return scores
    """)

PREDICT = textwrap.dedent("""\
    import torch as t
    from models.detector import Detector


    @t.no_grad()
    def predict(model, images):
        return model.decode_peaks(images)


    def report(model, images):
        with t.no_grad():
            return helper(model, images)


    def helper(model, images):
        return model.decode_peaks(images).sum()


    if __name__ == "__main__":
        print(predict(Detector(), t.randn(1, 3, 8, 8)))
    """)

TRAIN_THROUGH = textwrap.dedent("""\
    import torch
    from models.detector import Detector

    model = Detector()
    loss = model.decode_peaks(torch.randn(1, 3, 8, 8)).sum()
    loss.backward()
    """)

HANDED_ON = textwrap.dedent("""\
    import torch
    from models.detector import Detector

    model = Detector()
    callbacks = [model.decode_peaks]
    """)


def repository(tmp_path, **files):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "__init__.py").write_text("")
    (tmp_path / "models" / "detector.py").write_text(DETECTOR)
    for name, text in files.items():
        (tmp_path / f"{name}.py").write_text(text)
    return tmp_path


def adl001_lines(root) -> list[int]:
    return [f.line for f in lint_file(str(root / "models" / "detector.py"))[0] if f.code == "ADL001"]


def load_detector(tmp_path):
    spec = importlib.util.spec_from_file_location("detector", tmp_path / "models" / "detector.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Detector


def test_a_method_called_only_without_gradients_is_silent_and_runs(tmp_path):
    root = repository(tmp_path, predict=PREDICT)
    assert adl001_lines(root) == []
    model = load_detector(tmp_path)()
    with torch.no_grad():  # as predict() calls it
        scores = model.decode_peaks(torch.randn(1, 3, 8, 8))
    assert scores.shape == (1, 2, 8, 8)


@pytest.mark.parametrize("other", [TRAIN_THROUGH, HANDED_ON], ids=["backpropagated", "callback"])
def test_a_call_with_gradients_or_an_unknown_use_keeps_the_report(tmp_path, other):
    root = repository(tmp_path, predict=PREDICT, other=other)
    assert adl001_lines(root) == [16]
    model = load_detector(tmp_path)()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        model.decode_peaks(torch.randn(1, 3, 8, 8)).sum().backward()


def test_a_method_nobody_calls_is_checked_as_before(tmp_path):
    assert adl001_lines(repository(tmp_path)) == [16]
