"""Multi-step ("rollout") training of a global weather model with gradient accumulation: each
training sample is a forecast of `forecast_len + 1` steps, fed back autoregressively (the
prediction, detached, becomes the next input); the loss of every lead time in
`backprop_on_timestep` is back-propagated as it comes, and the optimizer steps once per forecast.
The default list is built as `range(0, forecast_len + 1)` while the steps are numbered from 1 to
`forecast_len + 1`, so the last lead time's prediction is made, its graph built, and its loss
never computed nor back-propagated: with `forecast_len = 2` the model is trained on lead times 1
and 2 only, silently.
Source: https://github.com/NCAR/miles-credit/pull/106 ("Bugfix on
`trainerERA5_multistep_grad_accum.py`", merged: `backprop_on_timestep = list(range(0,
conf['data']['forecast_len']+1))` becomes `list(range(0, conf['data']['forecast_len']+1+1))`,
"this will let `backprop_on_timestep` cover all lead times defined by `forecast_len`")
expect: silent"""
import math

import torch
import torch.nn as nn

torch.manual_seed(0)

CHANNELS, LAT, LON = 3, 8, 16


def advect(field, steps=1):
    """Ground truth: each variable drifts eastwards and relaxes towards its zonal mean."""
    for _ in range(steps):
        field = 0.9 * torch.roll(field, shifts=1, dims=-1) + 0.1 * field.mean(-1, keepdim=True)
    return field


class ForecastDataset:
    """Yields one batch per forecast step, with `forecast_step` and `stop_forecast` flags."""

    def __init__(self, forecast_len, batch_size=4):
        self.forecast_len, self.batch_size = forecast_len, batch_size

    def __iter__(self):
        lat = torch.linspace(-math.pi / 2, math.pi / 2, LAT).view(1, 1, LAT, 1)
        lon = torch.linspace(0, 2 * math.pi, LON).view(1, 1, 1, LON)
        while True:
            phase = torch.rand(self.batch_size, CHANNELS, 1, 1) * 2 * math.pi
            state = torch.cos(lat) * torch.sin(lon + phase) + 0.05 * torch.randn(self.batch_size, CHANNELS, LAT, LON)
            for step in range(1, self.forecast_len + 2):
                target = advect(state)
                yield {"x": state, "y": target, "forecast_step": torch.tensor(step),
                       "stop_forecast": torch.tensor(step == self.forecast_len + 1)}
                state = target


class ForecastNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv2d(CHANNELS, 16, 3, padding=1, padding_mode="circular"), nn.GELU(),
            nn.Conv2d(16, CHANNELS, 3, padding=1, padding_mode="circular"))

    def forward(self, x):
        return x + self.net(x)


class Trainer:
    def __init__(self, model):
        self.model = model

    def train_one_epoch(self, conf, trainloader, optimizer, criterion):
        forecast_length = conf["data"]["forecast_len"]
        if "backprop_on_timestep" in conf["data"]:
            backprop_on_timestep = conf["data"]["backprop_on_timestep"]
        else:
            backprop_on_timestep = list(range(0, conf["data"]["forecast_len"] + 1 + 1))
        assert forecast_length <= backprop_on_timestep[-1]

        self.model.train()
        dl = iter(trainloader)
        epoch_losses = []
        for _ in range(conf["trainer"]["batches_per_epoch"]):
            logs = []
            stop_forecast = False
            while not stop_forecast:
                batch = next(dl)
                forecast_step = batch["forecast_step"].item()
                if forecast_step == 1:
                    x = batch["x"]
                y_pred = self.model(x)
                if forecast_step in backprop_on_timestep:
                    loss = criterion(batch["y"], y_pred).mean()
                    logs.append(loss.item())
                    loss.backward()
                stop_forecast = batch["stop_forecast"].item()
                if stop_forecast:
                    break
                x = y_pred.detach()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), max_norm=conf["trainer"]["grad_max_norm"])
            optimizer.step()
            optimizer.zero_grad()
            epoch_losses.append(sum(logs) / len(logs))
        return epoch_losses


conf = {"data": {"forecast_len": 2}, "trainer": {"batches_per_epoch": 10, "grad_max_norm": 1.0}}
model = ForecastNet()
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-3)
trainer = Trainer(model)
losses = []
for epoch in range(1):
    losses += trainer.train_one_epoch(conf, ForecastDataset(conf["data"]["forecast_len"]), optimizer,
                                      nn.MSELoss(reduction="none"))

result = {"losses": torch.tensor(losses), "weights": [p.detach().clone() for p in model.parameters()]}
