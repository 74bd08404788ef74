"""A probabilistic regression with missing covariates that drops the rows with a missing
covariate before building the likelihood, so no NaN enters the graph and the gradient of `k` is
the gradient of the observed rows' likelihood.
Source: https://github.com/pytorch/pytorch/issues/15131."""
import torch
import torch.distributions as dist

torch.manual_seed(0)

x = torch.randn(40)
x[torch.randperm(40)[:6]] = float("nan")
y = 1.7 * torch.nan_to_num(x) + 0.3 * torch.randn(40)

k = torch.nn.Parameter(0.01 * torch.randn(1))
optimizer = torch.optim.SGD([k], lr=0.1)
losses = []
for step in range(5):
    observed = ~torch.isnan(x)
    likelihood = dist.Normal(loc=k * x[observed], scale=1.0, validate_args=False)
    log_prob = likelihood.log_prob(y[observed])
    loss = -log_prob.mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "k": k.detach().clone()}
