"""AD153 when the gradients are cleared with the model's own `model.zero_grad()`, not the
optimizer's: inside a gradient-accumulation window it throws away the micro-batches' gradients all
the same (held-out set 14, alpaca_farm#58: `self.policy.zero_grad()` at every micro-batch,
undiagnosed on the first run, as only `Optimizer.zero_grad` was recorded). This program is another
one: a sentiment classifier accumulating over three micro-batches."""

from __future__ import annotations

import torch

from helpers import run_plain, run_program

MODULE_CLEARED_EACH_MICRO_BATCH = """
    import torch
    from torch import nn
    import torch.nn.functional as F

    torch.manual_seed(0)
    model = nn.Sequential(nn.EmbeddingBag(30, 8), nn.Linear(8, 2))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    batches = [(torch.randint(0, 30, (4, 5)), torch.randint(0, 2, (4,))) for _ in range(6)]
    for index, (tokens, labels) in enumerate(batches):
        loss = F.cross_entropy(model(tokens), labels) / 3
        loss.backward()  # BACKWARD
        if (index + 1) % 3 == 0:
            optimizer.step()
        model.zero_grad()  # CLEAR
    result = [p.detach().clone() for p in model.parameters()]
"""

MEANT = MODULE_CLEARED_EACH_MICRO_BATCH.replace("""            optimizer.step()
        model.zero_grad()  # CLEAR
""", """            optimizer.step()
            model.zero_grad()
""")

CLEARED_AT_EACH_STEP = """
    import torch
    from torch import nn
    import torch.nn.functional as F

    torch.manual_seed(0)
    model = nn.Sequential(nn.EmbeddingBag(30, 8), nn.Linear(8, 2))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for step in range(4):
        tokens, labels = torch.randint(0, 30, (4, 5)), torch.randint(0, 2, (4,))
        model.zero_grad()
        F.cross_entropy(model(tokens), labels).backward()
        optimizer.step()
"""


def test_the_model_zero_grad_inside_the_window_is_named(tmp_path):
    outcome = run_program(tmp_path, MODULE_CLEARED_EACH_MICRO_BATCH)
    assert outcome.error is None
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD153"]
    assert diagnosis.primary.line == outcome.line("CLEAR")
    assert [r.line for r in diagnosis.related] == [outcome.line("BACKWARD")]
    assert diagnosis.related[0].note == "its gradients were cleared before a step 4 times, applied by a step 2 times"


def test_clearing_after_the_step_trains_on_the_whole_window(tmp_path):
    meant = run_plain(tmp_path, MEANT, "meant.py")["result"]
    buggy = run_plain(tmp_path, MODULE_CLEARED_EACH_MICRO_BATCH, "buggy.py")["result"]
    assert not all(torch.allclose(a, b) for a, b in zip(meant, buggy))
    assert not [d for d in run_program(tmp_path, MEANT).diagnoses if d.code == "AD153"]


def test_a_model_cleared_before_each_step_is_silent(tmp_path):
    outcome = run_program(tmp_path, CLEARED_AT_EACH_STEP)
    assert outcome.error is None
    assert not [d for d in outcome.diagnoses if d.code == "AD153"]


def test_the_help_moves_the_model_zero_grad_under_the_steps_condition(tmp_path):
    import textwrap

    from helpers import apply_help

    outcome = run_program(tmp_path, MODULE_CLEARED_EACH_MICRO_BATCH)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD153"]
    outcome.diagnoses = [diagnosis]
    assert apply_help(outcome) == textwrap.dedent(MEANT).replace("model.zero_grad()\n", "model.zero_grad()  # CLEAR\n")
