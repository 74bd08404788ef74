# message: Expected tangent to be floating point or complex, but got: torch.int64
# code: AD239 (catalogue: jvp_integer_tangent)
# set: 16
# trigger: the derivative of a torch.distributions.Normal log-density along its location parameter
#   with torch.func.jvp; the direction is written as a literal torch.tensor([1, 0, 0]) of integers
# source: none found; the pattern as users write it (integer literals make int64 tensors)
# results: log_value, slope
import torch
from torch.distributions import Normal
from torch.func import jvp


def log_density(loc, samples):
    return Normal(loc, torch.ones_like(loc)).log_prob(samples).sum()


torch.manual_seed(0)
loc = torch.zeros(3)
samples = torch.randn(10, 3)
direction = torch.tensor([1.0, 0.0, 0.0])  # PRIMARY
log_value, slope = jvp(lambda m: log_density(m, samples), (loc,), (direction,))
