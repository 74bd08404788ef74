# message: the derivative for '_cdist_backward' is not implemented.
# code: AD184 (catalogue: cdist_second_derivative)
# set: 14
# trigger: a kernel two-sample critic (Gaussian kernel over torch.cdist distances to a reference
#   set) is trained with a gradient penalty on its input: torch.autograd.grad(create_graph=True)
#   of the witness function, then backward through that gradient
# source: none found; the pattern as users write it (MMD-GAN style critics with a WGAN-GP penalty)
# results: critic, losses
import torch
from torch import nn


class KernelCritic(nn.Module):
    def __init__(self, reference):
        super().__init__()
        self.reference = reference
        self.log_bandwidth = nn.Parameter(torch.zeros(()))
        self.weights = nn.Parameter(torch.full((reference.shape[0],), 0.5))

    def forward(self, x):
        distances = torch.cdist(x, self.reference, compute_mode="use_mm_for_euclid_dist")  # PRIMARY
        kernel = torch.exp(-distances / self.log_bandwidth.exp())
        return kernel @ self.weights


torch.manual_seed(0)
critic = KernelCritic(torch.randn(6, 2))
optimizer = torch.optim.SGD(critic.parameters(), lr=0.05)
samples = torch.randn(5, 2) * 2
losses = []
for _ in range(2):
    optimizer.zero_grad()
    x = samples.clone().requires_grad_()
    witness = critic(x)
    (slope,) = torch.autograd.grad(witness.sum(), x, create_graph=True)
    penalty = (slope.norm(dim=1) - 1).pow(2).mean()
    loss = -witness.mean() + 10 * penalty
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
