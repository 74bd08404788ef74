"""Self-supervised SimSiam pre-training (lightly's SimSiam model): the loss is the negative cosine
similarity between one view's prediction `p` and the other view's projection `z`. SimSiam needs
a stop-gradient on `z`; the model returns `z` still attached to the graph, so the gradient also
flows through the target branch into the projection head and the backbone. Nothing is raised;
the encoder silently trains with a different objective (the one that collapses).
Source: https://github.com/lightly-ai/lightly/issues/559 ("The gradient of projection haven't
been detached in this implementation of SimSiam"; fix as in facebookresearch/simsiam: return
`z.detach()`).
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class SimSiam(nn.Module):
    def __init__(self, in_dim=8, hidden=16, out_dim=8):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU())
        self.projection_mlp = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, out_dim))
        self.prediction_mlp = nn.Sequential(nn.Linear(out_dim, 4), nn.ReLU(), nn.Linear(4, out_dim))

    def forward(self, x):
        f = self.backbone(x)
        z = self.projection_mlp(f)
        p = self.prediction_mlp(z)
        return z, p


def negative_cosine_similarity(p, z):
    return -F.cosine_similarity(p, z, dim=1).mean()


model = SimSiam()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
images = torch.randn(16, 8)
augment_noise = [(0.1 * torch.randn(16, 8), 0.1 * torch.randn(16, 8)) for _ in range(4)]
losses = []
for noise0, noise1 in augment_noise:
    x0, x1 = images + noise0, images + noise1
    z0, p0 = model(x0)
    z1, p1 = model(x1)
    loss = 0.5 * (negative_cosine_similarity(p0, z1) + negative_cosine_similarity(p1, z0))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
