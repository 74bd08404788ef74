"""VQ-VAE with a hand-written straight-through estimator (ritheshkumar95/pytorch-vqvae,
functions.py and modules.py): a custom autograd.Function picks each input's nearest code and,
in backward, copies the output gradient to the inputs (the straight-through estimator) and also
scatters it into the codebook rows it picked. The model passed the codebook weight itself to that
function, so the reconstruction loss moved the codebook too, although the paper trains the
codebook only through the codebook loss (`||sg[z_e] - e||^2`). Nothing is raised: the codebook
receives an extra, unintended gradient every step.
Source: https://github.com/ritheshkumar95/pytorch-vqvae/issues/7 ("the reconstruction loss is also
updating the embedding, which should not happen"; the maintainers: "We missed it when implementing
the VQ-ST function. We're quickly fixing it", by giving the function a detached codebook).
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

IN, HIDDEN, CODES, BATCH = 6, 4, 5, 8


class NearestCodeStraightThrough(torch.autograd.Function):
    @staticmethod
    def forward(ctx, inputs, codebook):
        with torch.no_grad():
            indices = torch.cdist(inputs, codebook).argmin(dim=1)
        ctx.save_for_backward(indices, codebook)
        ctx.mark_non_differentiable(indices)
        return codebook.index_select(0, indices), indices

    @staticmethod
    def backward(ctx, grad_codes, grad_indices):
        indices, codebook = ctx.saved_tensors
        grad_inputs = grad_codes.clone() if ctx.needs_input_grad[0] else None
        grad_codebook = None
        if ctx.needs_input_grad[1]:
            grad_codebook = torch.zeros_like(codebook).index_add_(0, indices, grad_codes)
        return grad_inputs, grad_codebook


class VQVAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(IN, 8), nn.ReLU(), nn.Linear(8, HIDDEN))
        self.codebook = nn.Embedding(CODES, HIDDEN)
        self.decoder = nn.Sequential(nn.Linear(HIDDEN, 8), nn.ReLU(), nn.Linear(8, IN))

    def forward(self, x):
        z_e = self.encoder(x)
        z_q_st, indices = NearestCodeStraightThrough.apply(z_e, self.codebook.weight)
        z_q_bar = self.codebook.weight.index_select(0, indices)
        return self.decoder(z_q_st), z_e, z_q_bar


model = VQVAE()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
data = torch.randn(BATCH, IN)

losses = []
for step in range(4):
    optimizer.zero_grad()
    x_tilde, z_e, z_q_bar = model(data)
    loss_recons = F.mse_loss(x_tilde, data)
    loss_vq = F.mse_loss(z_q_bar, z_e.detach())
    loss_commit = F.mse_loss(z_e, z_q_bar.detach())
    loss = loss_recons + loss_vq + 0.25 * loss_commit
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
