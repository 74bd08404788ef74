"""Saliency tool collecting a layer's output gradient with `register_full_backward_hook`; the next
module is `ReLU(inplace=True)`, which writes into the hooked module's output (a view made by the
hook's custom Function).
Source: https://github.com/pytorch/pytorch/issues/61519 ("Output 0 of BackwardHookFunctionBackward
is a view and is being modified inplace"; answer: register a forward hook on the module that
registers a tensor hook on its output, `output.register_hook(...)`, instead of the full backward
hook).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(
    nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(inplace=True),
    nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 4),
)
saved = {}


def keep_output_grad(module, grad_input, grad_output):
    saved["grad"] = grad_output[0]


model[2].register_full_backward_hook(keep_output_grad)

images = torch.rand(2, 3, 6, 6)
scores = model(images)
scores[:, 2].sum().backward()
result = {"scores": scores.detach(), "layer_grad": saved["grad"], "weight_grad": model[0].weight.grad}
