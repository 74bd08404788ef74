"""A multi-task chest X-ray classifier trained with sharpness-aware
minimization (SAM) sums the per-task losses into `loss` for the first
forward-backward pass, takes `optimizer.first_step()`, runs the model again
and adds the second pass's task losses to the same `loss` variable without
resetting it (`loss += loss_t`).  The second `loss.backward()` then reaches
the first pass's graph, which the first backward freed ("Trying to backward
through the graph a second time").  The fix starts the second sum from zero.
Buggy line: the second `loss.backward()` in `train_step`, through the
first pass's losses still in `loss`.
Expected finding: ADL019 there.
Source: https://github.com/davda54/sam/issues/10"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SAM(torch.optim.Optimizer):
    def __init__(self, params, base_optimizer, rho=0.05, **kwargs):
        defaults = dict(rho=rho, **kwargs)
        super().__init__(params, defaults)
        self.base_optimizer = base_optimizer(self.param_groups, **kwargs)

    @torch.no_grad()
    def first_step(self, zero_grad=False):
        grad_norm = torch.norm(torch.stack([p.grad.norm(2) for g in self.param_groups for p in g["params"] if p.grad is not None]), 2)
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
                if "e_w" in self.state[p]:
                    p.sub_(self.state[p]["e_w"])
        self.base_optimizer.step()
        if zero_grad:
            self.zero_grad()


class MultiTaskNet(nn.Module):
    def __init__(self, num_tasks=3):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(10, 16), nn.ReLU())
        self.heads = nn.ModuleList([nn.Linear(16, 1) for _ in range(num_tasks)])

    def forward(self, image):
        h = self.backbone(image)
        output = [head(h) for head in self.heads]
        return output, h


def get_loss(output, target, t):
    return F.binary_cross_entropy_with_logits(output[t].squeeze(1), target[:, t])


def train_step(model, optimizer, image, target, num_tasks=3):
    output, logit_map = model(image)
    loss = 0
    for t in range(num_tasks):
        loss_t = get_loss(output, target, t)
        loss += loss_t
    optimizer.zero_grad()
    loss.backward()
    optimizer.first_step(zero_grad=True)

    output, logit_map = model(image)
    for t in range(num_tasks):
        loss_t = get_loss(output, target, t)
        loss += loss_t
    loss.backward()  # expect: ADL019
    optimizer.second_step(zero_grad=True)


def run():
    torch.manual_seed(0)
    model = MultiTaskNet()
    optimizer = SAM(model.parameters(), torch.optim.SGD, lr=0.1)
    train_step(model, optimizer, torch.randn(4, 10), torch.randint(0, 2, (4, 3)).float())
