"""A Cox proportional-hazards survival network whose loss flattens the event indicator, so each
patient's term is weighted by its own event and the mean runs over the patients.
Source: https://github.com/mahmoodlab/PathomicFusion/pull/9."""
import torch
import torch.nn as nn

torch.manual_seed(0)

PATIENTS, FEATURES = 24, 10


def cox_loss(theta, survival_time, event):
    at_risk = (survival_time[None, :] >= survival_time[:, None]).float()
    log_risk = torch.log((torch.exp(theta)[None, :] * at_risk).sum(dim=1))
    return -torch.mean((theta - log_risk) * event.view(-1))


features = torch.randn(PATIENTS, FEATURES)
survival_time = torch.rand(PATIENTS) * 60
event = (torch.rand(PATIENTS, 1) > 0.3).float()
model = nn.Sequential(nn.Linear(FEATURES, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
losses = []
for epoch in range(20):
    theta = model(features).view(-1)
    loss = cox_loss(theta, survival_time, event)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
