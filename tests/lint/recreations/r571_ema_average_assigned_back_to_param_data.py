"""A forum thread "How to apply exponential moving average decay for
variables?" gives an `EMA` module (`register`, then `forward(name, x)`
returning `mu * x + (1 - mu) * shadow[name]`) used after each optimizer step
as `param.data = ema(name, param.data)`.  A later post points out that "the
moving averaged results will be used for the next iterations" and that the
usual approach is "only to track the moving average ... but does not assign
it back to param.data".  Re-created as a small training script using the
thread's EMA class and loop.  Nothing raises; the weights the optimizer
trains are replaced by the average after every step, so training follows
the averaged model instead of the SGD iterates.
Buggy line: `param.data = ema(name, param.data)` (the average written back).
Source: https://discuss.pytorch.org/t/how-to-apply-exponential-moving-average-decay-for-variables/10856"""
import torch
import torch.nn as nn


class EMA(nn.Module):
    def __init__(self, mu):
        super().__init__()
        self.mu = mu
        self.shadow = {}

    def register(self, name, val):
        self.shadow[name] = val.clone()

    def forward(self, name, x):
        assert name in self.shadow
        new_average = self.mu * x + (1.0 - self.mu) * self.shadow[name]
        self.shadow[name] = new_average.clone()
        return new_average


def train(model, data, ema, lr=0.1, write_back=True):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    for x, y in data:
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        for name, param in model.named_parameters():
            if param.requires_grad:
                if write_back:
                    param.data = ema(name, param.data)  # missed: no rule (an average written back into the trained weights through .data)
                else:
                    ema(name, param.data)
    return model


def bug_shows():
    """The trained weights are no longer the optimizer's iterates."""
    data = [(torch.randn(8, 3), torch.randn(8, 1)) for _ in range(3)]
    runs = []
    for write_back in (True, False):
        torch.manual_seed(0)
        model = nn.Linear(3, 1)
        ema = EMA(0.5)
        for name, param in model.named_parameters():
            if param.requires_grad:
                ema.register(name, param.data)
        runs.append(train(model, data, ema, write_back=write_back).weight.detach().clone())
    return not torch.allclose(runs[0], runs[1])
