"""Sharpness-aware minimization (SAM) as an optimizer wrapper: climb to the worst nearby weights,
take the gradient there, come back and step with it."""
import torch


class SAM(torch.optim.Optimizer):
    def __init__(self, params, base_optimizer_class, rho=0.05, **kwargs):
        super().__init__(params, dict(rho=rho, **kwargs))
        self.base_optimizer = base_optimizer_class(self.param_groups, **kwargs)

    @torch.no_grad()
    def first_step(self):
        norm = torch.norm(torch.stack([p.grad.norm() for group in self.param_groups
                                       for p in group["params"] if p.grad is not None]))
        for group in self.param_groups:
            scale = group["rho"] / (norm + 1e-12)
            for p in group["params"]:
                if p.grad is None:
                    continue
                e_w = p.grad * scale
                p.add_(e_w)
                self.state[p]["e_w"] = e_w
        self.zero_grad()

    @torch.no_grad()
    def second_step(self):
        for group in self.param_groups:
            for p in group["params"]:
                if "e_w" in self.state[p]:
                    p.sub_(self.state[p]["e_w"])
        self.base_optimizer.step()
        self.zero_grad()
