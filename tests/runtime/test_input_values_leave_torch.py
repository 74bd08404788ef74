"""AD305 names where the input's values left torch when `torch.autograd.grad(output, input)` fails
because the output was computed from them through NumPy or Python numbers (set 19's schnetpack#215:
a descriptor function computed with NumPy from `positions.detach().numpy()`). Before, the report
named the grad() call and listed `.numpy()` among places to look. Each link is checked: PyTorch's
error (the output does not reach the input), the data flow in the grad() call's block (the output
is computed from a statement that reads the input or passes it to a function of the user's), and
exactly one `.numpy()` / `.tolist()` / `.item()` chained on the input (or on the parameter it was
passed as). The help is advice: the computation written with torch; the tests check that a torch
version keeps the values and lets grad() run.

Two programs of the cause in other shapes, written before the change was run on them: a saliency
map whose NumPy normalisation is in the loop itself (`.detach().cpu().numpy()`), and a collocation
residual whose featurizer method rebuilds its features from `.tolist()`."""

from __future__ import annotations

import torch

from helpers import run_as_script, run_plain, run_program

SALIENCY_NORMALISED_IN_NUMPY = """
    import numpy as np
    import torch
    from torch import nn

    torch.manual_seed(0)
    classifier = nn.Sequential(nn.Flatten(), nn.Linear(16, 8), nn.ReLU(), nn.Linear(8, 3))
    maps = []
    for step in range(2):
        images = torch.rand(4, 1, 4, 4, requires_grad=True)  # MADE
        normalised = torch.from_numpy(np.tanh(images.detach().cpu().numpy() - 0.5))  # NUMPY
        scores = classifier(normalised).max(dim=1).values.sum()
        saliency = torch.autograd.grad(scores, images)[0]  # GRAD
        maps.append(saliency.abs())
    result = maps
"""

SALIENCY_IN_TORCH = SALIENCY_NORMALISED_IN_NUMPY.replace(
    "torch.from_numpy(np.tanh(images.detach().cpu().numpy() - 0.5))", "torch.tanh(images - 0.5)")

COLLOCATION_FEATURES_FROM_TOLIST = """
    import math
    import torch
    from torch import nn

    torch.manual_seed(0)


    class Fourier:
        def __init__(self, frequencies):
            self.frequencies = frequencies

        def encode(self, t):
            values = t.detach().flatten().tolist()  # TOLIST
            rows = [[math.sin(f * v) for f in self.frequencies] + [math.cos(f * v) for f in self.frequencies]
                    for v in values]
            return torch.tensor(rows)


    featurizer = Fourier([1.0, 2.0, 3.0])
    solution = nn.Sequential(nn.Linear(6, 12), nn.Tanh(), nn.Linear(12, 1))
    optimizer = torch.optim.Adam(solution.parameters(), lr=1e-2)
    for step in range(2):
        t = torch.rand(16, 1, requires_grad=True)
        u = solution(featurizer.encode(t))
        du_dt = torch.autograd.grad(u.sum(), t, create_graph=True)[0]  # GRAD
        residual = (du_dt + u).pow(2).mean()
        optimizer.zero_grad()
        residual.backward()
        optimizer.step()
    result = [p.detach().clone() for p in solution.parameters()]
"""

ENCODE_IN_TORCH = """
        def encode(self, t):
            angles = t * torch.tensor(self.frequencies)
            return torch.cat([torch.sin(angles), torch.cos(angles)], dim=1)
"""


def _collocation_in_torch(source: str) -> str:
    start = source.index("        def encode(self, t):")
    end = source.index("            return torch.tensor(rows)\n") + len("            return torch.tensor(rows)\n")
    return source[:start] + ENCODE_IN_TORCH.lstrip("\n") + source[end:]


def test_the_numpy_conversion_in_the_loop_is_named(tmp_path):
    outcome = run_as_script(tmp_path, SALIENCY_NORMALISED_IN_NUMPY)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD305"
    assert diagnosis.primary.line == outcome.line("NUMPY")
    assert "this line takes the values of images out of torch (images.detach().cpu().numpy())" \
        in diagnosis.primary.note
    assert {outcome.line("MADE"), outcome.line("GRAD")} <= {location.line for location in diagnosis.related}
    assert diagnosis.help[0].replacement is None
    assert diagnosis.help[0].message.startswith("compute that value with torch operations on images")


def test_the_normalisation_in_torch_keeps_the_values_and_gives_the_saliency(tmp_path):
    in_torch = run_plain(tmp_path, SALIENCY_IN_TORCH, "in_torch.py")
    images = torch.rand(4, 1, 4, 4)
    import numpy as np
    assert torch.allclose(torch.tanh(images - 0.5), torch.from_numpy(np.tanh(images.numpy() - 0.5)))
    assert all(saliency.shape == (4, 1, 4, 4) and saliency.abs().sum() > 0 for saliency in in_torch["result"])
    outcome = run_program(tmp_path, SALIENCY_IN_TORCH, "silent.py")
    assert outcome.error is None and not outcome.diagnoses


def test_the_tolist_in_a_method_given_the_input_is_named(tmp_path):
    outcome = run_as_script(tmp_path, COLLOCATION_FEATURES_FROM_TOLIST)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD305"
    assert diagnosis.primary.line == outcome.line("TOLIST")
    assert "encode() takes the values of t out of torch (t.detach().flatten().tolist())" in diagnosis.primary.note
    assert diagnosis.help[0].message.startswith("compute encode()'s result with torch operations on t")


def test_the_method_in_torch_gives_the_same_features_and_trains(tmp_path):
    in_torch = _collocation_in_torch(COLLOCATION_FEATURES_FROM_TOLIST)
    namespace = run_plain(tmp_path, in_torch, "in_torch.py")
    original = run_plain(tmp_path, COLLOCATION_FEATURES_FROM_TOLIST.replace(
        "for step in range(2):", "for step in range(0):"), "features.py")
    t = torch.rand(5, 1)
    assert torch.allclose(namespace["featurizer"].encode(t), original["featurizer"].encode(t), atol=1e-6)
    outcome = run_program(tmp_path, in_torch, "silent.py")
    assert outcome.error is None and not outcome.diagnoses


def test_an_input_that_the_output_also_uses_directly_is_not_a_round_trip(tmp_path):
    """The output reads the input itself too: grad() runs, nothing is reported."""
    source = SALIENCY_NORMALISED_IN_NUMPY.replace("classifier(normalised)", "classifier(normalised + images)")
    outcome = run_program(tmp_path, source)
    assert outcome.error is None and not outcome.diagnoses
