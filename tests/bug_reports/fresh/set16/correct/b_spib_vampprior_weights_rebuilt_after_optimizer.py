"""SPIB with the optimizer created again from `model.parameters()` after each
`reset_representative`, so that the rebuilt VampPrior weights train.
Source: https://github.com/tiwarylab/State-Predictive-Information-Bottleneck/pull/9."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

FEATURES, LATENT, STATES, SAMPLES, BETA, LR = 4, 2, 3, 64, 0.5, 5e-2


class SPIB(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(FEATURES, 16), nn.ReLU())
        self.mean_head = nn.Linear(16, LATENT)
        self.logvar_head = nn.Linear(16, LATENT)
        self.decoder = nn.Linear(LATENT, STATES)
        self.reset_representative(torch.randn(STATES, FEATURES))

    def reset_representative(self, representative_inputs):
        count = representative_inputs.shape[0]
        self.idle_input = torch.eye(count)
        self.representative_weights = nn.Linear(count, 1, bias=False)
        self.representative_weights.weight = nn.Parameter(torch.ones(1, count))
        self.representative_inputs = representative_inputs.clone().detach()

    def encode(self, x):
        hidden = self.encoder(x)
        return self.mean_head(hidden), self.logvar_head(hidden)

    def log_prior(self, z):
        means, logvars = self.encode(self.representative_inputs)
        weights = F.softmax(self.representative_weights(self.idle_input), dim=0).squeeze(-1)
        diff = z.unsqueeze(1) - means.unsqueeze(0)
        log_normal = -0.5 * (logvars + diff ** 2 / logvars.exp() + math.log(2 * math.pi)).sum(-1)
        return torch.logsumexp(log_normal + weights.log(), dim=1)

    def forward(self, x):
        mean, logvar = self.encode(x)
        z = mean + torch.randn_like(mean) * (0.5 * logvar).exp()
        log_posterior = -0.5 * (logvar + (z - mean) ** 2 / logvar.exp() + math.log(2 * math.pi)).sum(-1)
        return self.decoder(z), log_posterior - self.log_prior(z)


data = torch.randn(SAMPLES, FEATURES)
future_labels = (data[:, 0] > 0.3).long() + (data[:, 1] > 0.5).long()
model = SPIB()
optimizer = torch.optim.Adam(model.parameters(), lr=LR)
losses = []
for refinement in range(3):
    for epoch in range(5):
        logits, kl = model(data)
        loss = F.cross_entropy(logits, future_labels) + BETA * kl.mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.detach())
    with torch.no_grad():
        new_labels = model(data)[0].argmax(dim=1)
        new_inputs = torch.stack([data[new_labels == s].mean(0) if (new_labels == s).any() else data[s]
                                  for s in range(STATES)])
    model.reset_representative(new_inputs)
    optimizer = torch.optim.Adam(model.parameters(), lr=LR)

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
