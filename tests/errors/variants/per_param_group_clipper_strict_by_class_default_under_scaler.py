# message: The total norm of order 2.0 for gradients from `parameters` is non-finite, so it cannot be clipped. To disable this error and scale the gradients by the non-finite norm anyway, set `error_if_nonfinite=False`
# code: AD183 (catalogue: amp_clip_refuses_overflow)
# set: 29
# trigger: a gradient clipper class clips each of the optimizer's parameter groups with the group's own
#   max_norm, passing error_if_nonfinite=self.strict, a class attribute that defaults to True; under a
#   GradScaler whose first scale overflows the float16 backward, the first step's unscaled gradients
#   are inf and the clip refuses them instead of letting scaler.step() skip the step
# source: none found; the pattern as users write it (per-group clipping thresholds kept in param_groups)
# results: losses, model
import torch
from torch import nn


class GroupClipper:
    strict = True

    def __init__(self, optimizer):
        self.optimizer = optimizer

    def __call__(self):
        norms = []
        for group in self.optimizer.param_groups:
            norms.append(torch.nn.utils.clip_grad_norm_(group["params"], group["max_norm"],  # PRIMARY
                                                        error_if_nonfinite=self.strict))
        return norms


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
optimizer = torch.optim.SGD([
    {"params": model[0].parameters(), "max_norm": 1.0},
    {"params": model[2].parameters(), "max_norm": 0.5},
], lr=0.1)
clip = GroupClipper(optimizer)
scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 16)
x, y = torch.randn(8, 3) * 10, torch.randn(8, 2)
losses = []
for step in range(5):
    optimizer.zero_grad()
    with torch.autocast("cpu", dtype=torch.float16):
        out = model(x)
    loss = (out.float() - y).pow(2).mean()
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    clip()
    scaler.step(optimizer)
    scaler.update()
    losses.append(loss.detach())
