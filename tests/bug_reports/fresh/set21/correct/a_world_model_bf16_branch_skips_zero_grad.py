"""Training a navigation world model (facebookresearch/nwm, `train.py`'s `train_step`): the step has
two paths, plain float32 and bfloat16 autocast. Only the float32 path calls `opt.zero_grad()`; the
bfloat16 path runs the forward under autocast, calls backward() and steps, so with bfloat16 on
(the setting the runs use) every step adds its gradients to those of all the steps before it. No
error: the model trains on a running sum of gradients. The fix zeroes the gradients on both paths.
Source: https://github.com/facebookresearch/nwm/issues/16 ("Missing opt.zero_grad() when bfloat16
is enabled causes silent gradient accumulation").
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

STATE, ACTION, BATCH = 16, 3, 8


class WorldModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(STATE + ACTION + 1, 32), nn.SiLU(), nn.Linear(32, STATE))

    def forward(self, noisy_next, action, t):
        return self.net(torch.cat([noisy_next, action, t], dim=-1))


def train_step(model, opt, current, action, target, bfloat_enable):
    t = torch.rand(current.shape[0], 1)
    noise = torch.randn_like(target)
    noisy = (1 - t) * target + t * noise
    if bfloat_enable:
        opt.zero_grad()
        with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
            predicted = model(noisy + current, action, t)
            loss = F.mse_loss(predicted.float(), noise)
        loss.backward()
        opt.step()
    else:
        opt.zero_grad()
        predicted = model(noisy + current, action, t)
        loss = F.mse_loss(predicted, noise)
        loss.backward()
        opt.step()
    return loss.detach()


model = WorldModel()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.0)
current = torch.randn(BATCH, STATE)
action = torch.randn(BATCH, ACTION)
target = torch.randn(BATCH, STATE)

losses = [train_step(model, opt, current, action, target, bfloat_enable=True) for _ in range(5)]
result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
