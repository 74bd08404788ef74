# message: a leaf Variable that requires grad has been used in an in-place operation.
# code: AD137 (catalogue: mark_dirty_leaf)
# set: 6
# trigger: an adversarial attack projects its perturbation with a hand-written Function that
#   clamps its input in place and marks it dirty; it is applied to the perturbation itself, a leaf
#   made with torch.zeros_like(..., requires_grad=True)
# source: none found; the pattern as users write it
# results: perturbation, adversarial_losses
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
    adversarial = images + ProjectInPlace.apply(perturbation, 0.1)  # PRIMARY
    loss = F.cross_entropy(model(adversarial), labels)
    loss.backward()
    with torch.no_grad():
        perturbation += 0.05 * perturbation.grad.sign()
    perturbation.grad = None
    adversarial_losses.append(loss.item())
