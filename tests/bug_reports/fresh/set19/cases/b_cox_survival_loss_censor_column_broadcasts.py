"""A Cox proportional-hazards survival network on molecular features of patients: the network
gives each patient a log hazard `theta`, and the negative partial log-likelihood sums, over the
patients whose event was observed, theta minus the log of the summed exp(theta) over the risk set.
The event indicator comes from the data loader as a column (batch, 1) while the per-patient term
is a vector (batch,), so their product broadcasts to a (batch, batch) matrix and the mean runs
over every pair of patients: a different loss and different gradients, and nothing is raised.
Source: https://github.com/mahmoodlab/PathomicFusion/pull/9 ("Fixed bug in CoxLoss": the term
`(theta - log(sum(exp_theta * R_mat, dim=1))) * censor` broadcasts when `censor` is a 2-D
tensor, as it is when it is not squeezed; the fix flattens it).
expect: silent"""
import torch
import torch.nn as nn

torch.manual_seed(0)

PATIENTS, FEATURES = 24, 10


def cox_loss(theta, survival_time, event):
    at_risk = (survival_time[None, :] >= survival_time[:, None]).float()
    log_risk = torch.log((torch.exp(theta)[None, :] * at_risk).sum(dim=1))
    return -torch.mean((theta - log_risk) * event)


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
