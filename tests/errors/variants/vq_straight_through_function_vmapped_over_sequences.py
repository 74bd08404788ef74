# message: You tried to vmap over StraightThroughQuantise, but it does not have vmap support. Please
#   override and implement the vmap staticmethod or set generate_vmap_rule=True. For more details,
#   please see https://pytorch.org/docs/main/notes/extending.func.html
# code: AD232 (catalogue: function_without_vmap_rule)
# set: 16
# trigger: a VQ-VAE-style encoder quantises each sequence to its nearest codebook vectors through a
#   straight-through Function (forward and setup_context, no vmap rule); the sequences of a batch
#   are encoded with torch.vmap over a method written for one sequence
# source: none found; the straight-through estimator as VQ-VAE code writes it
# results: codes, loss, model
import torch
from torch import nn


class StraightThroughQuantise(torch.autograd.Function):  # PRIMARY
    @staticmethod
    def forward(z, codebook):
        distances = (z.unsqueeze(-2) - codebook).pow(2).sum(-1)
        return codebook[distances.argmin(-1)]

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output, None


class SequenceQuantiser(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(3, 2)
        self.codebook = nn.Parameter(torch.randn(5, 2))

    def encode_one(self, sequence):
        z = self.encoder(sequence)
        return StraightThroughQuantise.apply(z, self.codebook.detach())

    def forward(self, batch):
        return torch.vmap(self.encode_one)(batch)


torch.manual_seed(0)
model = SequenceQuantiser()
batch = torch.randn(4, 6, 3)
codes = model(batch)
loss = codes.pow(2).mean()
loss.backward()
