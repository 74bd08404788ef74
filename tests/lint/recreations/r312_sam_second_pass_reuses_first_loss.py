"""An active-learning trainer (a backbone plus a loss-prediction module)
switched its optimizer to SAM, which needs two forward-backward passes: the
first `loss.backward()` and `first_step()` move the weights to the
adversarial point, the second pass computes the loss there and
`second_step()` restores the weights and applies the update.  The second
forward's result was never assigned (`criterion(models['backbone'](inputs)[0],
labels)` as a statement), so the second `loss.backward(retain_graph=True)`
went through the first pass's graph, whose weights `first_step()` had moved
in place ("one of the variables needed for gradient computation has been
modified by an inplace operation: [torch.cuda.FloatTensor [512, 100]]").  The
fix assigns the second pass's loss and backpropagates that.
Buggy line: the second `loss.backward(retain_graph=True)` in `train_epoch`,
after `optimizers['backbone'].first_step(zero_grad=True)`.
Expected finding: ADL003 at `first_step` (an optimizer step before a backward
through the graph it changed), or ADL019.
Source: https://github.com/kozistr/pytorch_optimizer/issues/64"""
import torch
import torch.nn as nn


class SAM(torch.optim.Optimizer):
    def __init__(self, params, base_optimizer, rho=0.05, **kwargs):
        defaults = dict(rho=rho, **kwargs)
        super().__init__(params, defaults)
        self.base_optimizer = base_optimizer(self.param_groups, **kwargs)

    @torch.no_grad()
    def first_step(self, zero_grad=False):
        grad_norm = torch.norm(torch.stack([p.grad.norm(2) for g in self.param_groups for p in g["params"] if p.grad is not None]))
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


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
        self.linear = nn.Linear(16, 4)

    def forward(self, x):
        feature = self.features(x)
        return self.linear(feature), feature


def train_epoch(models, criterion, optimizers, batches):
    for inputs, labels in batches:
        scores, features = models["backbone"](inputs)
        target_loss = criterion(scores, labels)
        pred_loss = models["module"](features.detach()).view(-1)
        m_module_loss = (pred_loss - target_loss.detach()).abs().mean()
        loss = target_loss.mean() + 0.1 * m_module_loss

        criterion(models["backbone"](inputs)[0], labels)
        loss.backward(retain_graph=True)
        optimizers["backbone"].first_step(zero_grad=True)

        criterion(models["backbone"](inputs)[0], labels)
        loss.backward(retain_graph=True)  # missed: ADL003
        optimizers["backbone"].second_step(zero_grad=True)


def run():
    torch.manual_seed(0)
    models = {"backbone": Backbone(), "module": nn.Linear(16, 1)}
    criterion = nn.CrossEntropyLoss(reduction="none")
    optimizers = {"backbone": SAM(models["backbone"].parameters(), torch.optim.SGD, lr=0.1)}
    train_epoch(models, criterion, optimizers, [(torch.randn(4, 8), torch.tensor([0, 1, 2, 3]))])
