"""AD306's wording when several inputs of torch.autograd.grad do not require grad and only some
have a name in the calling frame (held-out set 20, CompVis/stable-diffusion#784: ldm's checkpoint
Function hands every parameter of a block, frozen cross-attention included, to autograd.grad): the
inputs are counted and the named ones listed, where the report read "an input, an input, param does
not require grad"."""

from helpers import run_as_script

SOME_NAMED = """
import torch
net = torch.nn.Linear(3, 3)
frozen = torch.nn.Linear(3, 3).requires_grad_(False)
x = torch.randn(2, 3)
out = frozen(net(x)).sum()
torch.autograd.grad(out, [x] + list(frozen.parameters()) + list(net.parameters()))  # GRAD
"""


def test_the_inputs_are_counted_and_the_named_ones_listed(tmp_path):
    outcome = run_as_script(tmp_path, SOME_NAMED)
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD306")
    assert diagnosis.primary.line == outcome.line("GRAD")
    assert diagnosis.primary.note == "3 of the inputs (x among them) do not require grad"
    assert "are constants to autograd" in diagnosis.notes[0]
