"""A StyleGAN-like discriminator uses a custom autograd Function for a fused scaled activation and
is trained with an R1 gradient penalty (`torch.autograd.grad(..., create_graph=True)` on real
images, then backward through that gradient). The Function keeps an intermediate of its forward
on `ctx` (the activation's slope, computed from the input) and uses it in backward. First-order gradients (gradcheck) are right, but in double backward the
intermediate is a constant with no graph, so the penalty's gradient silently loses its
contribution through it. albanD: save inputs/outputs with `save_for_backward` and recompute the
intermediate inside backward so double backward sees it.
Source: https://github.com/pytorch/pytorch/issues/58509
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class ScaledSoftplus(torch.autograd.Function):
    """y = softplus(x) * gain; dy/dx = sigmoid(x) * gain."""

    @staticmethod
    def forward(ctx, x, gain):
        slope = torch.sigmoid(x) * gain
        ctx.slope = slope
        ctx.gain = gain
        ctx.save_for_backward(x)
        return F.softplus(x) * gain

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        slope = torch.sigmoid(x) * ctx.gain
        return grad_out * slope, None


class Discriminator(nn.Module):
    def __init__(self, dim=6, hidden=16):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, 1)

    def forward(self, x):
        x = ScaledSoftplus.apply(self.fc1(x), 1.4)
        x = ScaledSoftplus.apply(self.fc2(x), 1.4)
        return self.out(x)


generator = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 6))
D = Discriminator()
opt_d = torch.optim.Adam(D.parameters(), lr=2e-3, betas=(0.0, 0.99))
opt_g = torch.optim.Adam(generator.parameters(), lr=2e-3, betas=(0.0, 0.99))
r1_gamma = 10.0
d_losses = []
for step in range(4):
    real = torch.randn(8, 6) * 0.5 + 1.0
    z = torch.randn(8, 4)
    fake = generator(z).detach()
    real.requires_grad_(True)
    real_logits = D(real)
    d_loss = F.softplus(D(fake)).mean() + F.softplus(-real_logits).mean()
    (grad_real,) = torch.autograd.grad(real_logits.sum(), real, create_graph=True)
    r1 = grad_real.pow(2).sum(1).mean()
    opt_d.zero_grad()
    (d_loss + r1_gamma / 2 * r1).backward()
    opt_d.step()
    g_loss = F.softplus(-D(generator(torch.randn(8, 4)))).mean()
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
    d_losses.append(d_loss.detach())
result = {"d_losses": torch.stack(d_losses), "D": [p.detach().clone() for p in D.parameters()]}
