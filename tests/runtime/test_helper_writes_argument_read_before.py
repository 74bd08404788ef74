"""AD101 whose out-of-place help becomes advice: a helper writes in place into its argument, which an
earlier call read (and saved) before the write, and the helper reads it again after the write.

Two reads of one tensor, one before the write and one after it: writing out of place keeps the
values the program computes (the earlier read sees the old values), and so does the other repair,
making the change once before the first read (both reads see the new values); nothing in the program
says which the earlier read meant. Found on set 15's OpenRLHF case
(https://github.com/OpenRLHF/OpenRLHF/pull/1319), whose accepted fix is the second repair while the
doctor wrote the first. Each advice's two changes, applied by hand, run without an error; a write in
the function that made the earlier read keeps its out-of-place change.
"""

import torch

from helpers import run_plain, run_program

# A penalty on neighbouring features reads them (mul keeps its inputs), then a standardising helper
# centres them in place and reads them again.
STANDARDISE = """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    torch.manual_seed(0)


    def alignment_penalty(features):
        return (features * features.roll(1, 0)).sum(-1).mean()  # EARLIER_READ


    def standardise(features):
        features.sub_(features.mean(0, keepdim=True))  # PRIMARY
        return features / (features.std(0, keepdim=True) + 1e-5)


    encoder = nn.Linear(6, 8)
    optimizer = torch.optim.SGD(encoder.parameters(), lr=0.1)
    x, target = torch.randn(16, 6), torch.randn(16, 8)
    losses = []
    for step in range(3):
        features = encoder(x)
        penalty = alignment_penalty(features)
        z = standardise(features)  # CALL
        loss = F.mse_loss(z, target) + 0.1 * penalty
        losses.append(loss.detach())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    result = [torch.stack(losses), *[p.detach().clone() for p in encoder.parameters()]]
"""

STANDARDISE_OUT_OF_PLACE = STANDARDISE.replace(
    "features.sub_(features.mean(0, keepdim=True))  # PRIMARY",
    "features = features.sub(features.mean(0, keepdim=True))  # PRIMARY")

STANDARDISE_CENTRED_FIRST = STANDARDISE.replace(
    "        features.sub_(features.mean(0, keepdim=True))  # PRIMARY\n", "").replace(
    "        features = encoder(x)\n",
    "        features = encoder(x)\n        features = features - features.mean(0, keepdim=True)\n")

# A denoiser module: an energy term squares the hidden values (pow keeps its input), then a gating
# method clamps them in place and reads them again.
DENOISER = """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    torch.manual_seed(3)


    class Denoiser(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(10, 10)
            self.scale = nn.Parameter(torch.zeros(10))

        def energy(self, hidden):
            return (hidden ** 2).mean()  # EARLIER_READ

        def gate(self, hidden):
            hidden.clamp_(min=-0.5, max=0.5)  # PRIMARY
            return hidden * torch.sigmoid(self.scale)

        def forward(self, noisy):
            hidden = self.proj(noisy)
            energy = self.energy(hidden)
            return self.gate(hidden), energy  # CALL


    model = Denoiser()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    noisy, clean = torch.randn(12, 10), torch.randn(12, 10)
    losses = []
    for step in range(3):
        denoised, energy = model(noisy)
        loss = F.mse_loss(denoised, clean) + 0.01 * energy
        losses.append(loss.detach())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    result = [torch.stack(losses), *[p.detach().clone() for p in model.parameters()]]
"""

DENOISER_OUT_OF_PLACE = DENOISER.replace(
    "hidden.clamp_(min=-0.5, max=0.5)  # PRIMARY", "hidden = hidden.clamp(min=-0.5, max=0.5)  # PRIMARY")

DENOISER_CLAMPED_FIRST = DENOISER.replace("            hidden.clamp_(min=-0.5, max=0.5)  # PRIMARY\n", "").replace(
    "            hidden = self.proj(noisy)\n",
    "            hidden = self.proj(noisy).clamp(min=-0.5, max=0.5)\n")


def _ad101(outcome):
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD101"]
    return diagnosis


def test_the_write_is_named_and_its_help_is_advice_with_both_changes(tmp_path):
    for source, out_of_place in ((STANDARDISE, "features = features.sub(features.mean(0, keepdim=True))"),
                                 (DENOISER, "hidden = hidden.clamp(min=-0.5, max=0.5)")):
        # The default mode knows the call that passed the tensor in; the full mode, where it was read.
        for mode, named in (("light", "CALL"), ("full", "EARLIER_READ")):
            outcome = run_program(tmp_path, source, mode=mode)
            assert outcome.error is not None
            diagnosis = _ad101(outcome)
            assert diagnosis.primary.line == outcome.line("PRIMARY")
            assert all(help.replacement is None for help in diagnosis.help)
            text = " ".join(help.message for help in diagnosis.help)
            assert out_of_place in text
            assert f"line {outcome.line(named)}" in text
            assert "before the first read" in text


def test_each_change_the_advice_names_runs_and_keeps_its_meaning(tmp_path):
    for buggy, out_of_place, first in ((STANDARDISE, STANDARDISE_OUT_OF_PLACE, STANDARDISE_CENTRED_FIRST),
                                       (DENOISER, DENOISER_OUT_OF_PLACE, DENOISER_CLAMPED_FIRST)):
        kept = run_program(tmp_path, out_of_place, "out_of_place.py")
        moved = run_program(tmp_path, first, "first.py")
        assert kept.error is None and not kept.diagnoses
        assert moved.error is None and not moved.diagnoses
        # Out of place, the first forward computes what the buggy program computed (its first loss,
        # before its backward() fails); the change made before the first read computes another loss.
        buggy_first_loss = run_plain(tmp_path, buggy.replace("loss.backward()", "break"), "forward_only.py")["losses"][0]
        assert torch.equal(kept.namespace["result"][0][0], buggy_first_loss)
        assert not torch.equal(moved.namespace["result"][0][0], buggy_first_loss)


def test_a_write_in_the_function_that_read_the_tensor_keeps_its_change(tmp_path):
    outcome = run_program(tmp_path, """
        import torch

        weights = torch.randn(5, requires_grad=True)
        scores = weights * 2.0
        gated = scores.pow(2)
        scores.add_(1.0)  # PRIMARY
        total = (gated + scores).sum()
        total.backward()
    """)
    diagnosis = _ad101(outcome)
    assert diagnosis.primary.line == outcome.line("PRIMARY")
    assert diagnosis.help[0].replacement is not None
