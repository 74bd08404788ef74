# message: torch.func.{grad, vjp, jacrev, hessian} don't yet support saved tensor hooks. Please open an
#   issue with your use case.
# code: AD233 (catalogue: checkpoint_inside_func_grad)
# set: 24
# trigger: an FGSM attack takes the input gradient of the loss with torch.func.grad; the classifier is a
#   spatial transformer network whose forward runs its localisation net, F.affine_grid and F.grid_sample
#   under torch.utils.checkpoint.checkpoint(use_reentrant=False), added to save memory in training
# source: none found; the pattern as users write it (FGSM with torch.func, checkpointed STN)
# results: adversarial
import os
import sys

import torch
import torch.nn.functional as F
from torch import nn
from torch.func import grad
from torch.utils.checkpoint import checkpoint

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


class SpatialTransformerClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.localisation = nn.Linear(36, 6)
        nn.init.zeros_(self.localisation.weight)
        with torch.no_grad():
            self.localisation.bias.copy_(torch.tensor([1.0, 0.0, 0.0, 0.0, 1.0, 0.0]))
        self.head = nn.Linear(36, 3)

    def warp(self, images):
        theta = self.localisation(images.flatten(1)).view(-1, 2, 3)
        grid = F.affine_grid(theta, list(images.shape), align_corners=False)
        return F.grid_sample(images, grid, align_corners=False)

    def forward(self, images):
        warped = checkpoint(self.warp, images, use_reentrant=False)  # PRIMARY
        return self.head(warped.flatten(1))


def fgsm(model, images, labels, epsilon):
    def loss_of(inputs):
        return F.cross_entropy(model(inputs), labels)

    return (images + epsilon * grad(loss_of)(images).sign()).clamp(0, 1)


torch.manual_seed(0)
model = SpatialTransformerClassifier()
images = torch.rand(2, 1, 6, 6)
labels = torch.tensor([0, 2])
adversarial = fgsm(model, images, labels, epsilon=0.03)
