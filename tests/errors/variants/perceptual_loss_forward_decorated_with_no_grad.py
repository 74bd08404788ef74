# message: element 0 of tensors does not require grad and does not have a grad_fn
# code: AD307 (catalogue: decorator_no_grad_cut)
# set: 13
# trigger: a perceptual loss module compares a frozen feature extractor's features of the output and
#   of the target; its forward is decorated with @torch.no_grad() because "the extractor is not
#   trained", which also cuts the gradient to the generator's output
# source: none found; the pattern as users write it (no_grad on a loss with a frozen network)
# results: generator, losses
import torch
import torch.nn.functional as F
from torch import nn


class PerceptualLoss(nn.Module):
    def __init__(self, extractor):
        super().__init__()
        self.extractor = extractor.requires_grad_(False)

    @torch.no_grad()  # PRIMARY
    def forward(self, output, target):
        return F.mse_loss(self.extractor(output), self.extractor(target))


torch.manual_seed(0)
generator = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 3))
criterion = PerceptualLoss(nn.Sequential(nn.Linear(3, 5), nn.ReLU()))
optimizer = torch.optim.SGD(generator.parameters(), lr=0.1)
z, target = torch.randn(6, 2), torch.randn(6, 3)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = criterion(generator(z), target)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
