"""An FGSM attack returns `x + eps * grad.sign()`, a non-leaf; using that adversarial batch as
the input of a second gradient computation leaves its `.grad` None and `.grad.clone()` fails.
Source: https://github.com/BorealisAI/advertorch/issues/49 (fix: return `xadv.detach()`; the
caller then asks for its gradient).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Linear(4, 3)
x = torch.randn(2, 4)
y = torch.tensor([0, 2])


def fgsm(model, x, y, eps=0.1):
    xadv = x.clone().requires_grad_()
    loss = F.cross_entropy(model(xadv), y)
    grad, = torch.autograd.grad(loss, xadv)
    xadv = xadv + eps * grad.sign()
    return xadv.detach()


fgsm_tensor = fgsm(model, x, y)
fgsm_tensor.requires_grad_()
loss = F.cross_entropy(model(fgsm_tensor), y)
loss.backward()
saliency = fgsm_tensor.grad.clone()
result = {"loss": loss.detach(), "saliency": saliency}
