"""Correct twin of b1: cast first, mark the cast tensor: `inp` is the leaf, its
`.grad` is the gradient of the score."""
import torch
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 5))

    def forward(self, x):
        return self.net(x)


def saliency(model, image):
    inp = image.clone().to("cpu", torch.float64).requires_grad_(True)
    score = model(inp).max()
    score.backward()
    return inp.grad.abs().amax(dim=1)


def run():
    torch.manual_seed(0)
    model = Classifier().double()
    return saliency(model, torch.rand(1, 3, 8, 8))
