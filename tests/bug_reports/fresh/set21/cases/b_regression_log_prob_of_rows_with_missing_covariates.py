"""A probabilistic regression on tabular data with missing covariates (NaN): the likelihood
Normal(k * x, 1) is built on all rows, its log_prob is evaluated on all rows, and the rows whose
covariate is missing are dropped afterwards (`log_prob[observed]`; validation off, as in the
report, which predates it). The loss is finite, but backward() goes through the NaN rows: zero
(from the selection) times a NaN partial derivative is NaN, so `k.grad` is NaN and the step turns
`k` into NaN. Nothing raises; the losses after the first step are NaN.
Source: https://github.com/pytorch/pytorch/issues/15131 ("Incorrect NaN gradient from
distribution.Normal.log_prob when using subset": selecting the non-NaN entries of log_prob gives a
finite loss but a NaN gradient).
expect: silent"""
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
    likelihood = dist.Normal(loc=k * x, scale=1.0, validate_args=False)
    log_prob = likelihood.log_prob(y)
    loss = -log_prob[observed].mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "k": k.detach().clone()}
