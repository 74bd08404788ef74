"""Graph-restricted Boltzmann machine with a hidden unit (dwave-pytorch-plugin), trained by
descending its quasi-objective: the sufficient statistics of the data, with the hidden spin
replaced by its conditional expectation given the visible spins, minus those of model samples, each
weighted by the parameters. The gradient of that objective is "statistics of the data minus
statistics of the model" only when the conditional expectation is a constant; the code computed the
hidden unit's effective field from the live parameters (`self._linear[...] + ... *
self._quadratic[...]`), so autograd also differentiates through the expectation and every
parameter gets a wrong gradient (no error, no warning).
Source: https://github.com/dwavesystems/dwave-pytorch-plugin/pull/29 ("The gradients were computed
incorrectly because the linear and quadratic parameters were used to marginalize hidden units
without detaching from the computation graph. The fix is to detach them when computing effective
fields.").
expect: silent"""
import torch
import torch.nn as nn

torch.manual_seed(0)

# spins 0 and 1 are visible, spin 2 is hidden; edges (0, 1), (0, 2), (1, 2)
EDGES = [(0, 1), (0, 2), (1, 2)]
HIDDEN = 2
VISIBLE_TO_HIDDEN = [1, 2]  # indices of the edges (0, 2) and (1, 2) in EDGES


class GraphRestrictedBoltzmannMachine(nn.Module):
    def __init__(self):
        super().__init__()
        self._linear = nn.Parameter(0.1 * torch.randn(3))
        self._quadratic = nn.Parameter(0.1 * torch.randn(len(EDGES)))

    def sufficient_statistics(self, spins):
        pairs = torch.stack([spins[:, i] * spins[:, j] for i, j in EDGES], dim=1)
        return torch.cat([spins, pairs], dim=1)

    def _compute_effective_field(self, visible):
        couplings = self._quadratic[VISIBLE_TO_HIDDEN]
        return self._linear[HIDDEN] + visible @ couplings

    def _compute_expectation_disconnected(self, visible):
        # E[s_hidden | visible] for p(s) proportional to exp(-theta . t(s))
        h_eff = self._compute_effective_field(visible)
        hidden = -torch.tanh(h_eff)
        return self.sufficient_statistics(torch.cat([visible, hidden[:, None]], dim=1)).mean(dim=0)

    def quasi_objective(self, s_observed, s_model):
        theta = torch.cat([self._linear, self._quadratic])
        obs = self._compute_expectation_disconnected(s_observed)
        model = self.sufficient_statistics(s_model).mean(dim=0)
        return obs @ theta - model @ theta


grbm = GraphRestrictedBoltzmannMachine()
optimizer = torch.optim.SGD(grbm.parameters(), lr=0.1)
s_observed = torch.randint(0, 2, (32, 2)).float() * 2 - 1
s_model = torch.randint(0, 2, (32, 3)).float() * 2 - 1

objectives, gradients = [], []
for step in range(5):
    optimizer.zero_grad()
    quasi = grbm.quasi_objective(s_observed, s_model)
    quasi.backward()
    gradients.append(torch.cat([grbm._linear.grad, grbm._quadratic.grad]).clone())
    optimizer.step()
    objectives.append(quasi.detach())

result = {
    "objectives": torch.stack(objectives),
    "gradients": torch.stack(gradients),
    "linear": grbm._linear.detach().clone(),
    "quadratic": grbm._quadratic.detach().clone(),
}
