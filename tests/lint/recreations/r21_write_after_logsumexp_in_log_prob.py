"""A mixture distribution's `log_prob` normalises the mixture weights by
subtracting in place from the result of `logsumexp`, which LogsumexpBackward0
keeps: any caller that differentiates the log-density fails (here the score,
d log p / d x, through `torch.autograd.functional.jacobian`).  The file never
calls `backward()` itself.
Source: https://github.com/pytorch/pytorch/blob/main/tools/autograd/derivatives.yaml ("logsumexp: ... logsumexp_backward(grad, self, result, ...)")"""
import math

import torch
from torch.distributions import Distribution, constraints


class GaussianMixture1d(Distribution):
    arg_constraints = {"scales": constraints.positive}
    support = constraints.real

    def __init__(self, logits, means, scales):
        self.logits, self.means, self.scales = logits, means, scales
        super().__init__(batch_shape=logits.shape[:-1], validate_args=False)

    def log_prob(self, value):
        z = (value.unsqueeze(-1) - self.means) / self.scales
        components = -0.5 * z ** 2 - torch.log(self.scales) - 0.5 * math.log(2 * math.pi)
        log_density = torch.logsumexp(components + self.logits, dim=-1)
        log_density -= torch.logsumexp(self.logits, dim=-1)  # expect: ADL001
        return log_density


def run():
    mixture = GaussianMixture1d(torch.zeros(3), torch.tensor([-1.0, 0.0, 1.0]), torch.ones(3))
    return torch.autograd.functional.jacobian(lambda x: mixture.log_prob(x).sum(), torch.tensor([0.5, -0.2]))
