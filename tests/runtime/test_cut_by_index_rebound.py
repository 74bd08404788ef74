"""AD301 (the loss has no grad_fn) when the cut is an index op whose result the program then
rebinds under the same name: `coords = scores.argmax(dim=1)`, `coords = coords.float() / (n - 1)`.
The name's value now is the rescaled one, and the search for the cut stopped at that line, so the
report named backward() (held-out set 14, BOP19_CDPN#4: coordinates decoded with argmax before an
L1 loss, line not named on the first run). The argmax is now named. This program is another one:
keypoints read off heatmaps with argmax."""

from __future__ import annotations

from helpers import run_program

KEYPOINTS_FROM_ARGMAX = """
    import torch
    from torch import nn
    import torch.nn.functional as F

    torch.manual_seed(0)
    SIZE = 8
    model = nn.Conv2d(1, 2, 3, padding=1)
    images = torch.randn(4, 1, SIZE, SIZE)
    target = torch.rand(4, 2)
    heatmaps = model(images).flatten(2)
    coords = heatmaps.argmax(dim=2)  # ARGMAX
    coords = coords.float() / (SIZE * SIZE - 1)
    loss = F.mse_loss(coords, target)
    loss.backward()  # BACKWARD
"""


def test_the_argmax_is_named_where_its_name_was_rebound(tmp_path):
    outcome = run_program(tmp_path, KEYPOINTS_FROM_ARGMAX)
    assert isinstance(outcome.error, RuntimeError)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD301"]
    assert diagnosis.primary.line == outcome.line("ARGMAX")
    assert [r.line for r in diagnosis.related] == [outcome.line("BACKWARD")]
    assert diagnosis.help[0].message.startswith("argmax/comparisons/integer casts have no gradient: compute the loss "
                                                "from the floating-point scores")
    assert all(s.replacement is None for s in diagnosis.help)
