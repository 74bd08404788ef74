# message: element 0 of tensors does not require grad and does not have a grad_fn
# code: AD307 (catalogue: decorator_no_grad_cut)
# set: 9
# trigger: an autoencoder's decode method carries @torch.no_grad written without parentheses
#   (copied from a sampling helper); forward ends with it, so the reconstruction loss has no history
# source: none found; the pattern as users write it (bare @torch.no_grad, allowed since torch 2.0)
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(4, 2)
        self.decoder = nn.Linear(2, 4)

    def encode(self, x):
        return torch.tanh(self.encoder(x))

    @torch.no_grad  # PRIMARY
    def decode(self, z):
        return self.decoder(z)

    def forward(self, x):
        return self.decode(self.encode(x))


torch.manual_seed(0)
model = AutoEncoder()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(6, 4)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), x)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
