"""A graph variational autoencoder over small molecular graphs (message passing encoder, a latent
per molecule, a decoder that predicts each atom's type): the total loss is the atom-type
reconstruction plus a beta-weighted KL term. Before `total_loss.backward()` the training step calls
`total_loss = total_loss.detach_().requires_grad_(True)`, which turns the loss into a new leaf
with no history: backward() runs, every parameter's gradient stays None (the logged gradient norm
is 0), the optimizer steps nothing and the model never trains. Nothing fails.
Source: https://github.com/ninglab/Modof/issues/4 ("generating the same smiles as original smiles":
the maintainer points at a gradient norm of 0.00, "your model is not trained"; the user had added
`total_loss = total_loss.detach_().requires_grad_(True)` before `total_loss.backward()`).
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

ATOM_TYPES, HIDDEN, LATENT, ATOMS, MOLECULES = 5, 16, 4, 6, 8


class GraphVAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(ATOM_TYPES, HIDDEN)
        self.message = nn.Linear(HIDDEN, HIDDEN)
        self.to_latent = nn.Linear(HIDDEN, 2 * LATENT)
        self.decode = nn.Linear(LATENT + HIDDEN, ATOM_TYPES)

    def forward(self, atoms, adjacency, noise):
        h = self.embed(atoms)
        for _ in range(2):
            h = torch.relu(h + adjacency @ self.message(h))
        mu, log_var = self.to_latent(h.mean(dim=1)).chunk(2, dim=-1)
        z = mu + torch.exp(0.5 * log_var) * noise
        logits = self.decode(torch.cat([z[:, None].expand(-1, ATOMS, -1), h], dim=-1))
        kl = -0.5 * (1 + log_var - mu ** 2 - log_var.exp()).sum(-1).mean()
        return logits, kl


model = GraphVAE()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
beta = 0.1
losses, grad_norms = [], []
for step in range(8):
    atoms = torch.randint(0, ATOM_TYPES, (MOLECULES, ATOMS))
    adjacency = (torch.rand(MOLECULES, ATOMS, ATOMS) < 0.4).float()
    adjacency = ((adjacency + adjacency.transpose(1, 2)) > 0).float()
    noise = torch.randn(MOLECULES, LATENT)
    logits, kl = model(atoms, adjacency, noise)
    total_loss = F.cross_entropy(logits.reshape(-1, ATOM_TYPES), atoms.reshape(-1)) + beta * kl
    optimizer.zero_grad()
    total_loss = total_loss.detach_().requires_grad_(True)
    total_loss.backward()
    grad_norms.append(sum(p.grad.norm() ** 2 for p in model.parameters() if p.grad is not None) ** 0.5
                      if any(p.grad is not None for p in model.parameters()) else torch.tensor(0.0))
    optimizer.step()
    losses.append(total_loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
