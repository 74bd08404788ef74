"""A vector quantiser whose codebook follows the encoder's outputs by an exponential moving average
(VQ-VAE-2 style) instead of a codebook loss."""
import torch
from torch import nn
import torch.nn.functional as F


class EMAQuantizer(nn.Module):
    def __init__(self, num_codes, dim, decay=0.9):
        super().__init__()
        self.decay = decay
        self.codebook = nn.Embedding(num_codes, dim)

    def forward(self, z):
        distances = torch.cdist(z, self.codebook.weight)
        codes = distances.argmin(dim=1)
        quantized = self.codebook(codes)
        if self.training:
            one_hot = F.one_hot(codes, self.codebook.num_embeddings).type_as(z)
            counts = one_hot.sum(0).clamp(min=1.0).unsqueeze(1)
            means = one_hot.t() @ z.detach() / counts
            used = one_hot.sum(0) > 0
            with torch.no_grad():
                self.codebook.weight[used] = self.decay * self.codebook.weight[used] + (1 - self.decay) * means[used]
        commitment = F.mse_loss(z, quantized.detach())
        return z + (quantized - z).detach(), commitment
