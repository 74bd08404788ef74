"""AD207 for `module.weight = nn.Parameter(computed)` followed by the module's call (set 20's
ConfigurableOptimizer#75, an entangled kernel in architecture search): the Parameter is a new leaf,
so the gradient never reaches what computed it. When the next statement calls the module, the
change calls it through torch.func.functional_call with the computed tensor in the parameter's
place: the same forward values, and the gradient reaches the shared kernel and the mixing
weights, as in the hand-written version (F.conv1d with the merged kernel)."""

from __future__ import annotations

import torch

from helpers import apply_help, run_plain, run_program

SWAPPED_PARAMETER = """
    import torch
    import torch.nn.functional as F
    from torch import nn

    torch.manual_seed(0)


    class MixedKernel(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv1d(2, 2, kernel_size=3, padding=1, bias=False)
            self.mix = nn.Parameter(torch.zeros(2))

        def forward(self, x):
            weights = torch.softmax(self.mix, dim=0)
            merged = weights[0] * self.conv.weight + weights[1] * F.pad(self.conv.weight[:, :, 1:2], (1, 1))
            original = self.conv.weight
            self.conv.weight = nn.Parameter(merged)  # SWAP
            out = self.conv(x)
            self.conv.weight = original
            return out


    model = MixedKernel()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(4):
        x = torch.randn(4, 2, 8)
        loss = (model(x) - x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    result = [p.detach().clone() for p in model.parameters()]
"""

HAND_WRITTEN = SWAPPED_PARAMETER.replace("""            original = self.conv.weight
            self.conv.weight = nn.Parameter(merged)  # SWAP
            out = self.conv(x)
            self.conv.weight = original
""", """            out = F.conv1d(x, merged, padding=1)
""")


def test_the_call_through_functional_call_is_offered(tmp_path):
    outcome = run_program(tmp_path, SWAPPED_PARAMETER)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD207"
    assert diagnosis.primary.line == outcome.line("SWAP")
    assert diagnosis.help[0].replacement.strip() == \
        "out = torch.func.functional_call(self.conv, {'weight': merged}, (x,))"


def test_the_functional_call_trains_as_the_hand_written_version(tmp_path):
    outcome = run_program(tmp_path, SWAPPED_PARAMETER)
    fixed = run_plain(tmp_path, apply_help(outcome))["result"]
    expected = run_plain(tmp_path, HAND_WRITTEN, "expected.py")["result"]
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(fixed, expected))


# Without the line that puts the original back, the new value is meant to stay (EvolveGCN's
# evolving weight, test_parameter_made_in_forward.py): no functional call is offered.
KEPT_SWAP = SWAPPED_PARAMETER.replace("            self.conv.weight = original\n", "")


def test_no_functional_call_when_the_swap_is_kept(tmp_path):
    outcome = run_program(tmp_path, KEPT_SWAP)
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD207")
    assert not any(s.replacement for s in diagnosis.help)
