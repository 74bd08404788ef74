# message: the derivative for '_cdist_backward' is not implemented.
# code: AD184 (catalogue: cdist_second_derivative)
# helpers: lib_metric.py
# set: 17
# trigger: a sharpness probe of a metric-learning loss takes a Hessian-vector product with
#   torch.autograd.functional.hvp with respect to the class centres; the loss, in a library module
#   (lib_metric.py), scores embeddings by minus their torch.cdist distances to the centres
# source: none found; the pattern as users write it (a curvature estimate by power iteration)
# results: sharpness, direction
import os
import sys

import torch
from torch.autograd.functional import hvp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_metric import centre_loss  # noqa: E402


class SharpnessProbe:
    def __init__(self, embeddings, labels, iterations=3):
        self.embeddings = embeddings
        self.labels = labels
        self.iterations = iterations

    def loss_of(self, centres):
        return centre_loss(self.embeddings, centres, self.labels)

    def top_eigenvalue(self, centres):
        direction = torch.ones_like(centres) / centres.numel() ** 0.5
        value = torch.zeros((), dtype=centres.dtype)
        for _ in range(self.iterations):
            _, product = hvp(self.loss_of, centres, direction)
            value = (product * direction).sum()
            direction = product / product.norm()
        return value, direction


torch.manual_seed(0)
embeddings = torch.randn(12, 3, dtype=torch.float64)
labels = torch.randint(0, 4, (12,))
centres = torch.randn(4, 3, dtype=torch.float64)
sharpness, direction = SharpnessProbe(embeddings, labels).top_eigenvalue(centres)
