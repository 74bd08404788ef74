"""Input-gradient attack: `requires_grad` is set on the images, then they are cast to the model's
dtype; the cast result is not a leaf, so after backward its `.grad` is None and the attack step
fails.
Source: https://github.com/pytorch/pytorch/issues/12627 (the report moves the input with `.cuda()`
after setting requires_grad; answer: that returns a new, non-leaf tensor whose `.grad` is not
populated; create the tensor on the device/dtype first, then set requires_grad).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 3)).double()
images = torch.rand(4, 5)
labels = torch.tensor([0, 1, 2, 1])

images.requires_grad = True
images = images.to(torch.float64)
loss = nn.functional.cross_entropy(model(images), labels)
loss.backward()
adversarial = (images + 0.05 * images.grad.sign()).clamp(0, 1)
result = {"loss": loss.detach(), "adversarial": adversarial.detach()}
