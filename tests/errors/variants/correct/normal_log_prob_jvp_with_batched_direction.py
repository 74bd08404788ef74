# message: Trying to set a forward gradient that has a different size than that of the original Tensor,
#   this is not supported. Tensor is of size [3] while the given forward gradient is of size [1, 3].
# code: AD236 (catalogue: jvp_tangent_of_one_example)
# set: 18
# trigger: the derivative of a torch.distributions.Normal log-likelihood along a direction in its
#   location parameter (shape [3]) with torch.func.jvp; the direction is drawn as torch.randn(1, 3),
#   a batch of one, like the data
# source: none found; the pattern as users write it
# results: value, slope
import os
import sys

import torch
from torch.distributions import Normal
from torch.func import jvp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

torch.manual_seed(0)
data = torch.randn(8, 3)
loc = torch.zeros(3)


def log_likelihood(mu):
    return Normal(mu, 1.0).log_prob(data).sum()


direction = torch.randn(1, 3)
value, slope = jvp(log_likelihood, (loc,), (direction.view_as(loc),))  # PRIMARY
