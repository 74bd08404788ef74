"""A hand-written optimizer for custom_heavy_ball_optimizer_subclass_over_frozen_embedding."""
import torch


class HeavyBall(torch.optim.Optimizer):
    def __init__(self, params, lr=0.1, momentum=0.9):
        super().__init__(params, {"lr": lr, "momentum": momentum})

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                update = group["lr"] * p.grad  # PRIMARY
                state = self.state[p]
                if "velocity" not in state:
                    state["velocity"] = update.clone()
                else:
                    state["velocity"].mul_(group["momentum"]).add_(update)
                p.sub_(state["velocity"])
