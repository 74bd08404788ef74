"""Optimizer steps taken inside backward(): one optimizer per parameter, stepped and cleared by a
`register_post_accumulate_grad_hook` as soon as that parameter's gradient is in (GaLore's
per-layer training, https://github.com/jiaweizzhao/GaLore, `torchrun_main.py`; PyTorch's own
"optimizer step in backward" recipe). Such a step runs after the graph of that backward() was
built, so what the graph computed from the parameter is not stale: AD228 (a tensor computed
before a step, used after it) must not take the current loss for an old value. Its twin, a value
computed once in `__init__` and trained with the same hooks, is still reported."""

import pytest
import torch

from helpers import apply_replacement, grads_equal, marked_line, run_plain, run_program

MODES = {"default": {}, "full": {"mode": "full"}, "strict": {"strict": True}}

CORRECT = {
    # The training script's form: each parameter's optimizer and scheduler stepped in its hook.
    "an optimizer per parameter stepped by its post-accumulate-grad hook": """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(6, 12), nn.GELU(), nn.Linear(12, 3))
        optimizer_of = {p: torch.optim.AdamW([p], lr=1e-2) for p in model.parameters()}
        schedule_of = {p: torch.optim.lr_scheduler.LambdaLR(optimizer_of[p], lambda step: min(1.0, (step + 1) / 3))
                       for p in model.parameters()}

        def step_in_backward(p):
            optimizer_of[p].step()
            optimizer_of[p].zero_grad()
            schedule_of[p].step()

        for p in model.parameters():
            p.register_post_accumulate_grad_hook(step_in_backward)
        x, y = torch.randn(16, 6), torch.randint(0, 3, (16,))
        losses = []
        for step in range(5):
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            losses.append(loss.detach())
        grads = losses + [p.detach().clone() for p in model.parameters()]
    """,
    # Tied input and output embeddings: the shared weight's hook runs once, after both uses.
    "tied embeddings, a hand-written SGD step per parameter in its hook": """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        torch.manual_seed(0)
        embed, block = nn.Embedding(20, 8), nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 8))
        head = nn.Linear(8, 20, bias=False)
        head.weight = embed.weight
        parameters = list(embed.parameters()) + list(block.parameters())

        @torch.no_grad()
        def step_in_backward(p):
            p.add_(p.grad, alpha=-0.1)
            p.grad = None

        for p in parameters:
            p.register_post_accumulate_grad_hook(step_in_backward)
        tokens = torch.randint(0, 20, (4, 6))
        losses = []
        for step in range(5):
            hidden = embed(tokens[:, :-1])
            logits = head(hidden + block(hidden))
            loss = F.cross_entropy(logits.reshape(-1, 20), tokens[:, 1:].reshape(-1))
            loss.backward()
            losses.append(loss.detach())
        grads = losses + [p.detach().clone() for p in parameters]
    """,
}


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("name", sorted(CORRECT))
def test_steps_taken_inside_backward_are_silent_and_unchanged(tmp_path, name, mode):
    plain = run_plain(tmp_path, CORRECT[name], "plain.py")
    outcome = run_program(tmp_path, CORRECT[name], **MODES[mode])
    assert outcome.error is None, outcome.error
    assert [d.code for d in outcome.diagnoses] == [] and outcome.warnings == []
    assert grads_equal(outcome.namespace["grads"], plain["grads"])


# The twin: a scale computed once in __init__ (its graph kept with retain_graph=True), trained by
# the same per-parameter hooks: the hooks move log_scale, and the scale the model uses never changes.
STALE_SCALE = """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    class Tempered(nn.Module):
        def __init__(self, features):
            super().__init__()
            self.linear = nn.Linear(features, features)
            self.log_scale = nn.Parameter(torch.zeros(features))
            self.scale = self.log_scale.exp()  # PRIMARY

        def forward(self, x):
            return self.linear(x) * self.scale


    torch.manual_seed(0)
    model = Tempered(4)
    optimizer_of = {p: torch.optim.SGD([p], lr=0.5) for p in model.parameters()}

    def step_in_backward(p):
        optimizer_of[p].step()
        optimizer_of[p].zero_grad()

    for p in model.parameters():
        p.register_post_accumulate_grad_hook(step_in_backward)
    x, y = torch.randn(16, 4), torch.randn(16, 4)
    for _ in range(4):
        loss = F.mse_loss(model(x), y)
        loss.backward(retain_graph=True)
    result = [model(x).detach()] + [p.detach().clone() for p in model.parameters()]
"""

# What the program means, written by hand: the scale computed from log_scale at each forward.
STALE_SCALE_REFERENCE = STALE_SCALE.replace(
    "            self.scale = self.log_scale.exp()  # PRIMARY\n",
    "\n        @property\n        def scale(self):\n            return self.log_scale.exp()\n",
).replace("loss.backward(retain_graph=True)", "loss.backward()")


def test_a_value_computed_once_before_steps_in_backward_is_still_reported(tmp_path):
    outcome = run_program(tmp_path, STALE_SCALE)
    assert outcome.error is None
    (diagnosis,) = outcome.diagnoses
    assert diagnosis.code == "AD228" and diagnosis.severity == "warning"
    assert diagnosis.primary.line == outcome.line("PRIMARY")
    assert "model.log_scale" in diagnosis.notes[0]
    expected = run_plain(tmp_path, STALE_SCALE_REFERENCE, "reference.py")["result"]
    assert not grads_equal(outcome.namespace["result"], expected)  # the bug changes what trains
    help = diagnosis.help[0]
    assert help.replacement and help.location
    fixed = apply_replacement(outcome.source, help.location, help.replacement)
    fixed_outcome = run_program(tmp_path, fixed, "fixed.py")
    assert fixed_outcome.error is None and fixed_outcome.diagnoses == [], fixed
    assert grads_equal(fixed_outcome.namespace["result"], expected), fixed
    assert marked_line(outcome.source, "PRIMARY") >= help.location.line
