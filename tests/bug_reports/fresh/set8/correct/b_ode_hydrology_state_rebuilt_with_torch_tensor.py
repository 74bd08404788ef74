"""Neural ODE hydrology model: the networks' inputs rebuilt from the states with `torch.tensor`.
Source: https://github.com/rtqichen/torchdiffeq/issues/226 (`torch.stack` keeps them in the graph)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
STEPS, DT = 20, 0.1
precipitation = torch.rand(STEPS + 1) * 2.0
temperature = torch.linspace(-2.0, 6.0, STEPS + 1)
observed_q = torch.linspace(0.1, 0.8, STEPS)


class M50Func(nn.Module):
    def __init__(self):
        super().__init__()
        self.ET_net = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
        self.Q_net = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1))

    def forward(self, step, S):
        S_snow, S_water = S[0], S[1]
        precp, temp = precipitation[step], temperature[step]
        melt = F.relu(temp) * 0.2 * S_snow
        snowfall = precp * torch.sigmoid(-temp)
        ET_output = self.ET_net(torch.stack([S_snow, S_water, temp]))
        Q_output = self.Q_net(torch.stack([S_water, precp]))
        d_snow = snowfall - melt
        d_water = precp - snowfall + melt - F.softplus(ET_output[0]) - F.softplus(Q_output[0])
        return torch.stack([d_snow, d_water]), F.softplus(Q_output[0])


def odeint(func, S0):
    S, discharge = S0, []
    for step in range(STEPS):
        dS, q = func(step, S)
        S = S + DT * dS
        discharge.append(q)
    return torch.stack(discharge)


func = M50Func()
optimizer = torch.optim.Adam(func.parameters(), lr=1e-2)
losses = []
for epoch in range(3):
    q = odeint(func, torch.tensor([1.0, 0.5]))
    loss = F.mse_loss(q, observed_q)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in func.parameters()]}
