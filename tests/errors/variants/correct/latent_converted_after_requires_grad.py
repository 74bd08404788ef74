# message: can't optimize a non-leaf Tensor
# code: AD119 (catalogue: non_leaf_optimizer)
# set: 4
# trigger: GAN inversion: the latent code is created with requires_grad=True and then converted
#   (.to(torch.float64)) for a double-precision generator before it is given to the optimizer
# source: https://github.com/mazzzystar/randomCNN-voice-transfer/issues/16 (requires_grad set before .cuda())
# results: latent, losses
import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(0)
generator = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 6)).double()
generator.requires_grad_(False)
target_image = torch.randn(1, 6, dtype=torch.float64)
latent = torch.randn(1, 8).to(torch.float64).requires_grad_()  # PRIMARY
optimizer = torch.optim.Adam([latent], lr=0.1)
losses = []
for _ in range(3):
    optimizer.zero_grad()
    loss = F.mse_loss(generator(latent), target_image)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
