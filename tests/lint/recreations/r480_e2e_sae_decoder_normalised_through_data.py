"""e2e_sae's sparse autoencoder normalised its decoder's columns inside
`forward` by assigning `self.decoder.weight.data = F.normalize(...)`: each
call rewrites the parameter behind autograd's back, so the gradient is taken
with respect to the normalised weight as if no normalisation happened (the
projection's Jacobian is missing) and Adam's moments describe a parameter
that the forward keeps replacing.  Nothing raises.  The fix normalises into
a new variable, `F.normalize(self.decoder.weight, dim=0)`, used in the
forward pass, leaving the parameter alone.
Buggy line: `self.decoder.weight.data = F.normalize(...)` in `SAE.forward`.
Source: https://github.com/ApolloResearch/e2e_sae/pull/46 (closes issue #44)"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SAE(nn.Module):
    def __init__(self, input_size=6, n_dict_components=10):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(input_size, n_dict_components), nn.ReLU())
        self.decoder = nn.Linear(n_dict_components, input_size, bias=False)

    def forward(self, x):
        c = self.encoder(x)
        self.decoder.weight.data = F.normalize(self.decoder.weight.data, dim=0)  # missed: ADL004
        x_hat = F.linear(c, self.decoder.weight)
        return x_hat, c


def sae_loss(x, x_hat, c, sparsity_coeff=1e-2):
    return F.mse_loss(x_hat, x) + sparsity_coeff * c.abs().sum(-1).mean()


def bug_shows():
    """The decoder's gradient is not the gradient of the normalised decoder's loss."""
    torch.manual_seed(0)
    sae = SAE()
    x = torch.randn(8, 6)
    w0 = sae.decoder.weight.detach().clone()
    x_hat, c = sae(x)
    sae_loss(x, x_hat, c).backward()
    buggy = sae.decoder.weight.grad.clone()
    w = w0.clone().requires_grad_(True)
    c_ref = sae.encoder(x)
    loss_ref = sae_loss(x, F.linear(c_ref, F.normalize(w, dim=0)), c_ref)
    (correct,) = torch.autograd.grad(loss_ref, w)
    return not torch.allclose(buggy, correct, atol=1e-5)
