# message: save_for_backward can only save variables, but argument 1 is of type bool
# code: AD122 (catalogue: save_for_backward_non_tensor)
# set: 27
# trigger: a Lightning-like discrete VAE's training_step quantises with a straight-through Gumbel-softmax
#   Function (another file) that takes the `hard` flag from the module's hparams and saves it with
#   ctx.save_for_backward next to the soft sample
# source: none found; the pattern as users write it (a flag saved with the tensors backward reads)
# helpers: lib_gumbel27.py
# results: losses, module
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_gumbel27 import StraightThroughGumbel  # noqa: E402


class DiscreteAutoencoder(nn.Module):
    def __init__(self, width=6, codes=5, hard=True, temperature=0.7):
        super().__init__()
        self.hparams = {"hard": hard, "temperature": temperature}
        self.encoder = nn.Linear(width, codes)
        self.decoder = nn.Linear(codes, width)

    def training_step(self, batch, noise):
        logits = self.encoder(batch)
        code = StraightThroughGumbel.apply(logits, noise, self.hparams["temperature"], self.hparams["hard"])
        return (self.decoder(code) - batch).pow(2).mean()

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-2)


torch.manual_seed(0)
module = DiscreteAutoencoder()
optimizer = module.configure_optimizers()
losses = []
for _ in range(3):
    batch = torch.randn(8, 6)
    noise = -torch.log(-torch.log(torch.rand(8, 5).clamp(1e-6, 1 - 1e-6)))
    loss = module.training_step(batch, noise)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
