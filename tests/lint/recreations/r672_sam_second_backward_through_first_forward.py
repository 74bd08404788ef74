"""google-research/sam, issue 17 "Something wrong before the second loss backward": training with
Sharpness-Aware Minimization fails at the second backward with "one of the variables needed for
gradient computation has been modified by an inplace operation: [torch.cuda.FloatTensor [64, 1]],
which is output 0 of TBackward, is at version 2; expected version 1". `[64, 1]` is the transposed
weight of the final `Linear(64, 1)`, saved by its matmul in the first forward; the one in-place
write between the two backwards is SAM's `first_step`, which moves every weight to `w + e(w)`
(`p.add_(e_w)`). So the second loss was built from the first forward's output, and its backward
goes through weights the ascent step has written (SAM needs a second forward at the perturbed
weights). Re-created with a SAM optimizer (first_step / second_step around a base SGD), a
regressor ending in `Linear(64, 1)` and the reporter's two-backward training step.
Buggy line: `optimizer.first_step(zero_grad=True)` (between the forward and the second backward through it).
Source: https://github.com/google-research/sam/issues/17"""
import torch
import torch.nn as nn


class SAM(torch.optim.Optimizer):
    def __init__(self, params, base_optimizer, rho=0.05, **kwargs):
        defaults = dict(rho=rho, **kwargs)
        super().__init__(params, defaults)
        self.base_optimizer = base_optimizer(self.param_groups, **kwargs)
        self.param_groups = self.base_optimizer.param_groups

    @torch.no_grad()
    def first_step(self, zero_grad=False):
        grad_norm = self._grad_norm()
        for group in self.param_groups:
            scale = group["rho"] / (grad_norm + 1e-12)
            for p in group["params"]:
                if p.grad is None:
                    continue
                e_w = p.grad * scale
                p.add_(e_w)
                self.state[p]["e_w"] = e_w
        if zero_grad:
            self.zero_grad()

    @torch.no_grad()
    def second_step(self, zero_grad=False):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                p.sub_(self.state[p]["e_w"])
        self.base_optimizer.step()
        if zero_grad:
            self.zero_grad()

    def _grad_norm(self):
        return torch.norm(torch.stack([p.grad.norm(p=2) for g in self.param_groups for p in g["params"] if p.grad is not None]), p=2)


class Regressor(nn.Module):
    def __init__(self, d_in=16):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(d_in, 64), nn.ReLU())
        self.out = nn.Linear(64, 1)

    def forward(self, x):
        return self.out(self.body(x))


def train(steps=2):
    torch.manual_seed(0)
    model = Regressor()
    optimizer = SAM(model.parameters(), torch.optim.SGD, lr=0.1, momentum=0.9)
    criterion = nn.MSELoss()
    for _ in range(steps):
        inputs, targets = torch.randn(8, 16), torch.randn(8, 1)
        predictions = model(inputs)
        loss = criterion(predictions, targets)
        loss.backward(retain_graph=True)
        optimizer.first_step(zero_grad=True)  # expect: ADL003
        criterion(predictions, targets).backward()
        optimizer.second_step(zero_grad=True)


run = train


if __name__ == "__main__":
    train()
