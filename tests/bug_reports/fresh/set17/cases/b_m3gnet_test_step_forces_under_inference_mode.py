"""A graph-network interatomic potential (species embeddings, radial-basis edge features, one
message-passing layer, per-atom energies) trained on energies and forces, the forces being
`-dE/dpositions` computed inside the potential's forward with gradients switched on
(`torch.enable_grad()`, so that the validation loop under `no_grad` still gets forces). The test
loop runs under `torch.inference_mode()`, as PyTorch Lightning's `trainer.test` does by default:
inference mode cannot be undone by `enable_grad`, the energy has no graph, and
`torch.autograd.grad` raises "element 0 of tensors does not require grad and does not have a
grad_fn".
Source: https://github.com/materialyzeai/matgl/issues/163 ("Error when trying trainer.test":
training and validation of an M3GNet potential run, `trainer.test(...)` fails with that error;
the answer: the trainer must be built with `inference_mode=False` so that forces and stresses
can be computed, which evaluates under `torch.no_grad()` instead).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

ATOMS, SPECIES, HIDDEN, RBF, CUTOFF = 8, 3, 16, 8, 3.0


class GraphPotential(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(SPECIES, HIDDEN)
        self.edge = nn.Linear(RBF, HIDDEN)
        self.update = nn.Sequential(nn.Linear(2 * HIDDEN, HIDDEN), nn.SiLU())
        self.readout = nn.Sequential(nn.Linear(HIDDEN, HIDDEN), nn.SiLU(), nn.Linear(HIDDEN, 1))
        self.register_buffer("centers", torch.linspace(0.5, CUTOFF, RBF))

    def energy(self, species, positions):
        i, j = torch.triu_indices(ATOMS, ATOMS, offset=1)
        dist = (positions[i] - positions[j]).norm(dim=-1)
        envelope = 0.5 * (torch.cos(torch.pi * dist.clamp(max=CUTOFF) / CUTOFF) + 1)
        rbf = torch.exp(-4.0 * (dist[:, None] - self.centers) ** 2) * envelope[:, None]
        h = self.embed(species)
        messages = self.edge(rbf) * h[j]
        aggregated = torch.zeros_like(h).index_add(0, i, messages).index_add(0, j, self.edge(rbf) * h[i])
        h = self.update(torch.cat([h, aggregated], dim=-1))
        return self.readout(h).sum()

    def forward(self, species, positions):
        with torch.enable_grad():
            positions = positions.clone().requires_grad_(True)
            energy = self.energy(species, positions)
            forces = -torch.autograd.grad(energy, positions, create_graph=self.training)[0]
        return energy, forces


def make_structures(n):
    data = []
    for _ in range(n):
        species = torch.randint(0, SPECIES, (ATOMS,))
        positions = torch.rand(ATOMS, 3) * 3
        energy = torch.randn(())
        forces = torch.randn(ATOMS, 3) * 0.1
        data.append((species, positions, energy, forces))
    return data


train_set, test_set = make_structures(6), make_structures(3)
model = GraphPotential()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
losses = []
for epoch in range(2):
    model.train()
    for species, positions, energy, forces in train_set:
        pred_energy, pred_forces = model(species, positions)
        loss = F.mse_loss(pred_energy, energy) + F.mse_loss(pred_forces, forces)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())

model.eval()
test_errors = []
with torch.inference_mode():
    for species, positions, energy, forces in test_set:
        pred_energy, pred_forces = model(species, positions)
        test_errors.append(torch.stack([(pred_energy - energy).abs(), (pred_forces - forces).abs().mean()]))

result = {"losses": torch.stack(losses), "test_errors": torch.stack(test_errors).clone(),
          "params": [p.detach().clone() for p in model.parameters()]}
