"""Category-level pose: the predicted shape deformation is centred in place with
`shape_delta -= shape_delta.mean(1, keepdim=True)` after a regulariser used it.
Source: https://github.com/kywind/self-corr-pose/issues/5 (fix: `shape_delta = shape_delta - ...`).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)
points = 5
predictor = nn.Linear(8, points * 3)
feature = torch.randn(2, 8)
template = torch.randn(points, 3)
observed = torch.randn(2, points, 3)

shape_delta = predictor(feature).view(2, points, 3)
deform_reg = shape_delta.pow(2).mean()
shape_delta = shape_delta - shape_delta.mean(1, keepdim=True)
shape = template + shape_delta
loss = (shape - observed).abs().mean() + 0.1 * deform_reg
loss.backward()
result = {"loss": loss.detach(), "w": predictor.weight.grad, "b": predictor.bias.grad}
