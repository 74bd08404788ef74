"""A Bayesian neural network's linear layer whose weights and biases are Gaussians: each holds a
`mu` and a `log_sigma` parameter, and `sample_parameters` draws the layer's weights from
`torch.distributions.Normal(mu, exp(log_sigma))` before `F.linear`. The draw is written with
`.sample()`, which runs without gradient: the drawn weights are constants, the loss has no
graph, and training fails at `loss.backward()` with "element 0 of tensors does not require grad
and does not have a grad_fn". The change (the post's point, the reparameterisation trick):
`.rsample()`, a draw that differentiates through mu and sigma.
Source: https://laserkelvin.github.io/machine%20learning/2020-03-11-why-reparameterization/
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class BayesianLinear(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.weight_mu = nn.Parameter(torch.Tensor(out_features, in_features))
        self.weight_log_sigma = nn.Parameter(torch.Tensor(out_features, in_features))
        if bias is None or bias is False:
            self.bias = False
        else:
            self.bias = True
        if self.bias:
            self.bias_mu = nn.Parameter(torch.Tensor(out_features))
            self.bias_log_sigma = nn.Parameter(torch.Tensor(out_features))
        self.reset_parameters()

    def reset_parameters(self):
        nn.init.normal_(self.weight_mu, 0.0, 0.1)
        nn.init.constant_(self.weight_log_sigma, -3.0)
        if self.bias:
            nn.init.zeros_(self.bias_mu)
            nn.init.constant_(self.bias_log_sigma, -3.0)

    def sample_parameters(self):
        # exponential on log sigma to enforce positive values
        # for the Gaussian width
        weights = torch.distributions.Normal(
            self.weight_mu,
            torch.exp(self.weight_log_sigma)
        ).rsample()
        if self.bias:
            bias = torch.distributions.Normal(
                self.bias_mu,
                torch.exp(self.bias_log_sigma)
            ).rsample()
        else:
            bias = None
        self.weights_values = weights
        self.bias_values = bias
        return weights, bias

    def forward(self, x):
        weights, bias = self.sample_parameters()
        return F.linear(x, weights, bias)


model = nn.Sequential(BayesianLinear(3, 16), nn.Tanh(), BayesianLinear(16, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
x = torch.randn(64, 3)
y = x.sum(dim=1, keepdim=True) ** 2 / 3

losses = []
for epoch in range(5):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
