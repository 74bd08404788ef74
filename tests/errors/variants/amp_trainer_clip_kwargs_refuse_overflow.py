# message: The total norm of order 2.0 for gradients from `parameters` is non-finite, so it cannot be clipped.
#   To disable this error and scale the gradients by the non-finite norm anyway, set
#   `error_if_nonfinite=False`
# code: AD183 (catalogue: amp_clip_refuses_overflow)
# set: 17
# trigger: a Trainer-like class keeps its clipping arguments in a dict attribute (max_norm and
#   error_if_nonfinite=True) and passes them with **self.clip_kwargs to clip_grad_norm_ after unscale_,
#   under a GradScaler whose first steps overflow, as GradScaler expects and skips
# source: none found; the pattern as users write it (clipping options kept in a dict from a config)
# results: weights
import torch
from torch import nn


class Trainer:
    def __init__(self, model, lr=0.1):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=lr)
        self.scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 16)
        self.clip_kwargs = {"max_norm": 1.0, "error_if_nonfinite": True}  # PRIMARY

    def training_step(self, x, y):
        self.optimizer.zero_grad()
        with torch.autocast("cpu", dtype=torch.float16):
            out = self.model(x)
        loss = (out.float() - y).pow(2).mean()
        self.scaler.scale(loss).backward()
        self.scaler.unscale_(self.optimizer)
        nn.utils.clip_grad_norm_(self.model.parameters(), **self.clip_kwargs)
        self.scaler.step(self.optimizer)
        self.scaler.update()


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
trainer = Trainer(model)
for _ in range(6):
    trainer.training_step(torch.randn(8, 3) * 10, torch.randn(8, 2))
weights = [p.detach().clone() for p in model.parameters()]
