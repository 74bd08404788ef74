# message: The total norm of order 2.0 for gradients from `parameters` is non-finite, so it cannot be
#   clipped. To disable this error and scale the gradients by the non-finite norm anyway, set
#   `error_if_nonfinite=False`
# code: AD183 (catalogue: amp_clip_refuses_overflow)
# set: 26
# trigger: a Lightning-like module's on_before_optimizer_step hook, called by a small Trainer after
#   scaler.unscale_(), computes the gradient norm with torch.nn.utils.get_total_norm(...,
#   error_if_nonfinite=True) to log it and clips with clip_grads_with_norm_; the first steps at the
#   scaler's initial scale overflow in float16, which GradScaler expects and skips
# source: none found; the pattern as users write it (the norm computed once for logging and
#   clipping with the two-step API of torch.nn.utils)
# results: weights, logged_norms
import torch
from torch import nn


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
        self.logged_norms = []

    def training_step(self, batch):
        inputs, targets = batch
        with torch.autocast("cpu", dtype=torch.float16):
            outputs = self.net(inputs)
        return (outputs.float() - targets).pow(2).mean()

    def on_before_optimizer_step(self, optimizer):
        grads = [p.grad for p in self.parameters() if p.grad is not None]
        total_norm = nn.utils.get_total_norm(grads, error_if_nonfinite=False)  # PRIMARY
        self.logged_norms.append(total_norm.detach())
        nn.utils.clip_grads_with_norm_(self.parameters(), 1.0, total_norm)


class Trainer:
    def __init__(self, module):
        self.module = module
        self.optimizer = torch.optim.SGD(module.parameters(), lr=0.1)
        self.scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 16)

    def fit(self, batches):
        for batch in batches:
            self.optimizer.zero_grad()
            loss = self.module.training_step(batch)
            self.scaler.scale(loss).backward()
            self.scaler.unscale_(self.optimizer)
            self.module.on_before_optimizer_step(self.optimizer)
            self.scaler.step(self.optimizer)
            self.scaler.update()


torch.manual_seed(0)
module = Regressor()
Trainer(module).fit([(torch.randn(8, 3) * 10, torch.randn(8, 2)) for _ in range(6)])
weights = [p.detach().clone() for p in module.parameters()]
logged_norms = torch.stack(module.logged_norms)
