"""Bayesian regression guide: variational parameters made with requires_grad, then `.type_as(data)`.
Source: https://github.com/pyro-ppl/pyro/pull/970 (convert first, then require grad)."""
import torch

torch.manual_seed(0)
N, p = 64, 2
data_x = torch.randn(N, p, dtype=torch.float64)
data_y = data_x @ torch.tensor([1.5, -0.7], dtype=torch.float64) + 0.3 + 0.1 * torch.randn(N, dtype=torch.float64)
data = torch.cat([data_x, data_y.unsqueeze(1)], dim=1)

w_loc = torch.randn(1, p).type_as(data).requires_grad_()
w_log_scale = torch.full((1, p), -3.0).type_as(data).requires_grad_()
b_loc = torch.randn(1).type_as(data).requires_grad_()
b_log_scale = torch.full((1,), -3.0).type_as(data).requires_grad_()
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
