"""FlashTorch's saliency `Backprop.visualize` sets `requires_grad` on the
input image, backpropagates the class score to it, then plots the image
after `denormalize`, which undoes the ImageNet normalisation channel by
channel in place: `for channel, mean, std in zip(denormalized[0], means,
stds): channel.mul_(std).add_(mean)`, where `denormalized = tensor.clone()`.
The clone of an image that requires grad carries a graph, and iterating it
returns views of one `unbind` ("Output 0 of UnbindBackward0 is a view and is
being modified inplace").  The fix denormalises a detached copy (or with
out-of-place arithmetic).
Buggy line: `channel.mul_(std).add_(mean)` in `denormalize`.
Expected finding: ADL015 there.
Source: https://github.com/MisaOgura/flashtorch/issues/45"""
import torch
import torch.nn as nn


def denormalize(tensor):
    means = [0.485, 0.456, 0.406]
    stds = [0.229, 0.224, 0.225]
    denormalized = tensor.clone()
    for channel, mean, std in zip(denormalized[0], means, stds):
        channel.mul_(std).add_(mean)  # expect: ADL015
    return denormalized


class Backprop:
    def __init__(self, model):
        self.model = model

    def calculate_gradients(self, input_, target_class):
        self.model.zero_grad()
        output = self.model(input_)
        output[0, target_class].backward()
        return input_.grad.clone()

    def visualize(self, input_, target_class):
        input_.requires_grad_(True)
        gradients = self.calculate_gradients(input_, target_class)
        max_gradients = gradients.abs().amax(dim=1, keepdim=True)
        return denormalize(input_), max_gradients


def run():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 3))
    backprop = Backprop(model)
    backprop.visualize(torch.randn(1, 3, 8, 8), target_class=1)
