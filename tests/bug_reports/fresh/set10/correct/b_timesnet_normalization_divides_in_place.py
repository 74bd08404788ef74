"""TimesNet normalization dividing the centered input in place after var() saved it.
Source: https://github.com/thuml/Time-Series-Library/issues/699 (x_enc = x_enc / stdev)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
seq_len, pred_len, channels = 24, 8, 3


class Forecaster(nn.Module):
    def __init__(self):
        super().__init__()
        self.projection = nn.Linear(seq_len, pred_len)

    def forecast(self, x_enc):
        # Normalization from Non-stationary Transformer
        means = x_enc.mean(1, keepdim=True).detach()
        x_enc = x_enc - means
        stdev = torch.sqrt(torch.var(x_enc, dim=1, keepdim=True, unbiased=False) + 1e-5)
        x_enc = x_enc / stdev
        dec_out = self.projection(x_enc.permute(0, 2, 1)).permute(0, 2, 1)
        return dec_out * stdev + means


class MixedInputForecaster(nn.Module):
    def __init__(self):
        super().__init__()
        self.mixer = nn.Linear(channels, channels)
        self.model = Forecaster()

    def forward(self, x):
        return self.model.forecast(self.mixer(x))


model = MixedInputForecaster()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
history = torch.randn(16, seq_len, channels).cumsum(1)
future = torch.randn(16, pred_len, channels)
losses = []
for step in range(3):
    optimizer.zero_grad()
    loss = F.mse_loss(model(history), future)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
