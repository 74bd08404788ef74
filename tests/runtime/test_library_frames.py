"""Primary locations and helps are in the user's files: a failure or a write inside an installed
library (numpy, a package in site-packages) or inside torch is reported at the user's line that
called into it, and no help edits a library file."""

from __future__ import annotations

import os

import numpy as np
import torch

from helpers import apply_help, run_as_script, run_plain


run_program = run_as_script


def _in_user_file(location, outcome) -> bool:
    return location is not None and location.file == outcome.path


def test_numpy_conversion_inside_fromnumeric_points_at_the_users_call(tmp_path):
    outcome = run_program(tmp_path, """
        import numpy as np
        import torch

        scores = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
        probs = torch.sigmoid(scores)
        ranked = np.sort(probs)  # CALL
    """)
    assert "fromnumeric" in "".join(f.f_code.co_filename for f in _frames(outcome.error))  # numpy raised it
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD113"
    assert _in_user_file(diagnosis.primary, outcome) and diagnosis.primary.line == outcome.line("CALL")
    assert all(s.location is None or s.location.file == outcome.path for s in diagnosis.help)
    namespace = run_plain(tmp_path, apply_help(outcome))
    assert np.array_equal(namespace["ranked"], np.sort(torch.sigmoid(torch.tensor([0.5, -1.0, 2.0])).numpy()))


def test_failure_inside_torch_nn_functional_points_at_the_users_call(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        import torch.nn.functional as F

        logits = torch.tensor([[0.5, -1.0, 2.0], [1.0, 0.0, -1.0]], requires_grad=True)
        class_weight = torch.ones(3, requires_grad=True) * 2
        loss = F.cross_entropy(logits, torch.tensor([0, 2]), weight=class_weight)  # CALL
        loss.backward()
    """)
    frames = [f.f_code.co_filename for f in _frames(outcome.error)]
    assert any(name.endswith(os.path.join("nn", "functional.py")) for name in frames)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD140"
    assert _in_user_file(diagnosis.primary, outcome) and diagnosis.primary.line == outcome.line("CALL")
    namespace = run_plain(tmp_path, apply_help(outcome))
    expected = torch.tensor([[0.5, -1.0, 2.0], [1.0, 0.0, -1.0]], requires_grad=True)
    torch.nn.functional.cross_entropy(expected, torch.tensor([0, 2]), weight=torch.full((3,), 2.0)).backward()
    assert torch.allclose(namespace["logits"].grad, expected.grad)


def test_a_write_inside_an_installed_package_is_reported_at_the_users_call(tmp_path):
    package = tmp_path / "venv" / "lib" / "site-packages" / "scalelib"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        "def rescale(h, factor):\n"
        "    h.mul_(factor)  # inside the library\n"
        "    return h\n")
    outcome = run_program(tmp_path, f"""
        import sys
        sys.path.insert(0, {str(package.parent)!r})
        import torch
        from scalelib import rescale

        w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
        h = torch.sigmoid(w)
        out = rescale(h, 2.0)  # CALL
        out.sum().backward()
    """)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD101"
    assert _in_user_file(diagnosis.primary, outcome) and diagnosis.primary.line == outcome.line("CALL")
    for location in [*diagnosis.related, *(s.location for s in diagnosis.help)]:
        assert location is None or "site-packages" not in location.file
    assert all(s.replacement is None or s.location.file == outcome.path for s in diagnosis.help)


def _frames(error):
    tb = error.__traceback__
    while tb is not None:
        yield tb.tb_frame
        tb = tb.tb_next
