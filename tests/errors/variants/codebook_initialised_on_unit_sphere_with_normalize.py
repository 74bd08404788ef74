# message: can't optimize a non-leaf Tensor
# code: AD119 (catalogue: non_leaf_optimizer)
# set: 11
# trigger: a vector-quantiser class initialises its codebook on the unit sphere with
#   F.normalize(torch.randn(..., requires_grad=True), dim=1) on self, and hands it to Adam; the
#   normalised codebook is computed, not a leaf
# source: none found; the pattern as users write it (codebooks and prototypes initialised
#   normalised)
# results: quantiser.codebook, losses
import torch
import torch.nn.functional as F


class Quantiser:
    def __init__(self, codes, dim):
        self.codebook = F.normalize(torch.randn(codes, dim, requires_grad=True), dim=1)  # PRIMARY
        self.optimizer = torch.optim.Adam([self.codebook], lr=0.05)

    def step(self, z):
        self.optimizer.zero_grad()
        distances = torch.cdist(z, self.codebook)
        loss = distances.min(dim=1).values.pow(2).mean()
        loss.backward()
        self.optimizer.step()
        return loss.item()


torch.manual_seed(0)
quantiser = Quantiser(4, 3)
z = torch.randn(8, 3)
losses = [quantiser.step(z) for _ in range(2)]
