"""AD305 naming the detach(): torch.autograd.grad asks for the gradient with respect to an input,
and the output was computed from a detach()ed tensor made from it (a model whose forward detaches
its features, used for a saliency map). The detach() line is the primary location, its help
drops the detach(), and the help applied gives the input gradient of a hand-written oracle."""

from __future__ import annotations

import torch

from helpers import apply_help, run_as_script, run_plain, run_program

SALIENCY = """
    import torch
    from torch import nn

    torch.manual_seed(0)


    class Classifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.backbone = nn.Sequential(nn.Linear(6, 8), nn.Tanh())
            self.head = nn.Linear(8, 3)

        def forward(self, x):
            features = self.backbone(x)
            history.append(features.mean().detach())
            return self.head(features.detach())  # CUT


    history = []
    model = Classifier()
    images = torch.randn(4, 6)
    saliency = []
    for image in images:
        x = image.unsqueeze(0).requires_grad_(True)
        score = model(x)[0].max()
        saliency.append(torch.autograd.grad(score, x)[0])  # GRAD
"""


def test_the_detach_that_cut_the_input_is_named_with_a_help(tmp_path):
    outcome = run_program(tmp_path, SALIENCY)
    assert isinstance(outcome.error, RuntimeError)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD305"]
    assert diagnosis.primary.line == outcome.line("CUT")  # not the logging detach() before it
    assert diagnosis.help[0].replacement == "return self.head(features)"


def test_the_help_applied_gives_the_input_gradient(tmp_path):
    outcome = run_program(tmp_path, SALIENCY)
    fixed = run_plain(tmp_path, apply_help(outcome))
    torch.manual_seed(0)  # the same weights and images; the gradient of the top score, written by hand
    linear1, linear2 = torch.nn.Linear(6, 8), torch.nn.Linear(8, 3)
    images = torch.randn(4, 6)
    for image, found in zip(images, fixed["saliency"]):
        hidden = torch.tanh(image @ linear1.weight.detach().T + linear1.bias.detach())
        scores = hidden @ linear2.weight.detach().T + linear2.bias.detach()
        top = int(scores.argmax())
        expected = (linear2.weight.detach()[top] * (1 - hidden ** 2)) @ linear1.weight.detach()
        assert torch.allclose(found[0], expected, atol=1e-6)


def test_an_unused_input_without_a_detach_on_the_way_keeps_the_plain_report(tmp_path):
    outcome = run_as_script(tmp_path, """
        import torch

        x = torch.randn(3, requires_grad=True)
        w = torch.randn(3, requires_grad=True)
        log = (w * 2).detach()  # a copy kept for logging: the output does not use it
        y = (w ** 2).sum()
        torch.autograd.grad(y, x)  # GRAD
    """)
    assert isinstance(outcome.error, RuntimeError)
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD305"]
    assert diagnosis.primary.line == outcome.line("GRAD")
