"""A LoRA DreamBooth training script calls `optimizer.zero_grad()` between
`accelerator.backward(loss)` and `optimizer.step()`.  The gradients the
backward pass just computed are cleared before the step reads them: every
step moves the LoRA weights by nothing (or only by weight decay), and the
run "trains" without learning.  Nothing raises.  The fix clears the
gradients before the forward pass (or after the step).
Buggy line: `optimizer.zero_grad()` in `train_loop`, between the backward
pass and the step.
Expected finding: ADL018 there (gradients cleared between the backward
pass and the step that should use them).
Source: https://github.com/cloneofsimo/lora/issues/263"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class LoraInjectedLinear(nn.Module):
    def __init__(self, in_features, out_features, r=2):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.lora_down = nn.Linear(in_features, r, bias=False)
        self.lora_up = nn.Linear(r, out_features, bias=False)
        nn.init.normal_(self.lora_down.weight, std=1 / r)
        nn.init.zeros_(self.lora_up.weight)
        self.linear.requires_grad_(False)

    def forward(self, x):
        return self.linear(x) + self.lora_up(self.lora_down(x))


class Accelerator:
    """The subset of `accelerate.Accelerator` the script uses."""

    def backward(self, loss):
        loss.backward()


def lora_parameters(model):
    return [p for n, p in model.named_parameters() if "lora" in n]


def train_loop(unet, dataloader, accelerator, optimizer):
    for latents, target in dataloader:
        noise_pred = unet(latents)
        loss = F.mse_loss(noise_pred, target)
        accelerator.backward(loss)
        optimizer.zero_grad()  # expect: ADL018
        optimizer.step()


def _data():
    torch.manual_seed(0)
    return [(torch.randn(4, 6), torch.randn(4, 6)) for _ in range(3)]


def bug_shows():
    """After training, the LoRA up-projection is still all zeros."""
    torch.manual_seed(1)
    unet = LoraInjectedLinear(6, 6)
    optimizer = torch.optim.SGD(lora_parameters(unet), lr=0.1)
    train_loop(unet, _data(), Accelerator(), optimizer)
    return bool((unet.lora_up.weight == 0).all())


def run():
    torch.manual_seed(1)
    unet = LoraInjectedLinear(6, 6)
    train_loop(unet, _data(), Accelerator(), torch.optim.SGD(lora_parameters(unet), lr=0.1))
