import torch
from torch import nn
import torch.nn.functional as F


class ProjectInPlace(torch.autograd.Function):
    @staticmethod
    def forward(ctx, delta, eps):
        ctx.save_for_backward(delta.abs() <= eps)
        delta.clamp_(-eps, eps)
        ctx.mark_dirty(delta)
        return delta

    @staticmethod
    def backward(ctx, grad_output):
        inside, = ctx.saved_tensors
        return grad_output * inside, None


torch.manual_seed(0)
model = nn.Linear(4, 3)
images, labels = torch.randn(5, 4), torch.tensor([0, 1, 2, 0, 1])
perturbation = torch.zeros_like(images, requires_grad=True)
adversarial_losses = []
for _ in range(3):
    adversarial = images + ProjectInPlace.apply(perturbation.clone(), 0.1)  # PRIMARY
    loss = F.cross_entropy(model(adversarial), labels)
    loss.backward()
    with torch.no_grad():
        perturbation += 0.05 * perturbation.grad.sign()
    perturbation.grad = None
    adversarial_losses.append(loss.item())
