# message: element 0 of tensors does not require grad and does not have a grad_fn
# code: AD301 (catalogue: grad_missing_create_graph)
# set: 14
# trigger: StyleGAN2-style lazy R1 regularisation: every other step the discriminator's gradient at
#   the real images is taken with torch.autograd.grad (without create_graph=True) and the penalty on
#   its norm is backpropagated on its own
# source: none found; the pattern as users write it (R1 penalty as a separate backward)
# results: discriminator, losses
import torch
from torch import nn

torch.manual_seed(0)
discriminator = nn.Sequential(nn.Linear(4, 6), nn.Softplus(), nn.Linear(6, 1))
optimizer = torch.optim.SGD(discriminator.parameters(), lr=0.05)
real, fake = torch.randn(8, 4), torch.randn(8, 4) + 1.0
losses = []
for step in range(4):
    optimizer.zero_grad()
    loss = nn.functional.softplus(discriminator(fake)).mean() + nn.functional.softplus(-discriminator(real)).mean()
    loss.backward()
    if step % 2 == 0:
        images = real.detach().requires_grad_()
        (gradient,) = torch.autograd.grad(discriminator(images).sum(), images, create_graph=True)  # PRIMARY
        r1 = gradient.pow(2).sum(dim=1).mean()
        (5.0 * r1).backward()
    optimizer.step()
    losses.append(loss.item())
