"""Saliency visualisation: the input image (which requires grad) is denormalized channel by channel
with `channel.mul_(std).add_(mean)` while iterating over it: the channels are outputs of `unbind`,
which may not be modified in place.
Source: https://github.com/haofanwang/Score-CAM/issues/28 (answer: write each channel back out of
place, `denormalized[0][i] = denormalized[0][i].mul(std)` then `.add(mean)`).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 3))
means, stds = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
image = torch.randn(1, 3, 8, 8, requires_grad=True)

score = model(image)[0, 1]
score.backward()
saliency = image.grad.abs().amax(dim=1)


def denormalize(tensor):
    denormalized = tensor.clone()
    for channel, mean, std in zip(denormalized[0], means, stds):
        channel.mul_(std).add_(mean)
    return denormalized


shown = denormalize(image)
result = {"saliency": saliency, "shown": shown.detach()}
