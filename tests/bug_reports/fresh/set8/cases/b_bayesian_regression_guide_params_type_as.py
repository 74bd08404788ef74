"""Bayesian linear regression by variational inference (pyro's example, re-created with plain
torch): the guide's variational parameters are made with `requires_grad=True` and then converted
to the data's type, `torch.randn(1, p, requires_grad=True).type_as(data)`. With double data the
conversion is an operation of the graph: what is kept is not the leaf that was asked to require
grad, so it cannot be optimized.
Source: https://github.com/pyro-ppl/pyro/pull/970 ("the `.type_as` comes after the requires_grad
assignment, so w_mu is no longer a leaf variable"; fix: convert first, then set
`requires_grad = True`).
expect: raises"""
import torch

torch.manual_seed(0)
N, p = 64, 2
data_x = torch.randn(N, p, dtype=torch.float64)
data_y = data_x @ torch.tensor([1.5, -0.7], dtype=torch.float64) + 0.3 + 0.1 * torch.randn(N, dtype=torch.float64)
data = torch.cat([data_x, data_y.unsqueeze(1)], dim=1)

w_loc = torch.randn(1, p, requires_grad=True).type_as(data)
w_log_scale = torch.full((1, p), -3.0, requires_grad=True).type_as(data)
b_loc = torch.randn(1, requires_grad=True).type_as(data)
b_log_scale = torch.full((1,), -3.0, requires_grad=True).type_as(data)
optimizer = torch.optim.Adam([w_loc, w_log_scale, b_loc, b_log_scale], lr=0.05)

prior = torch.distributions.Normal(torch.zeros((), dtype=torch.float64), torch.ones((), dtype=torch.float64))
elbos = []
for step in range(5):
    q_w = torch.distributions.Normal(w_loc, w_log_scale.exp())
    q_b = torch.distributions.Normal(b_loc, b_log_scale.exp())
    w, b = q_w.rsample(), q_b.rsample()
    prediction = data[:, :p] @ w.squeeze(0) + b
    log_likelihood = torch.distributions.Normal(prediction, 0.1).log_prob(data[:, p]).sum()
    log_prior = prior.log_prob(w).sum() + prior.log_prob(b).sum()
    elbo = log_likelihood + log_prior - q_w.log_prob(w).sum() - q_b.log_prob(b).sum()
    optimizer.zero_grad()
    (-elbo).backward()
    optimizer.step()
    elbos.append(elbo.detach())
result = {"elbos": elbos, "params": [t.detach().clone() for t in (w_loc, w_log_scale, b_loc, b_log_scale)]}
