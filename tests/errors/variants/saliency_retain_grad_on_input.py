# message: can't retain_grad on Tensor that has requires_grad=False
# code: AD116 (catalogue: retain_grad_no_grad)
# trigger: a saliency map: retain_grad() on the input images, which do not require grad, to read
#   images.grad after backward()
# source: https://github.com/open-mmlab/mmpretrain/issues/1151 (the pattern)
# results: saliency, model
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
images = torch.randn(2, 4)
images.retain_grad()  # PRIMARY
scores = model(images)
scores[:, 0].sum().backward()
saliency = images.grad.abs()
