"""learn2learn MAML, freezing a block in the inner loop: the user clones the
meta-model per task, `task_model = maml.clone()`, and then freezes one block
of the clone with `for name, p in task_model.meta_block.named_parameters():
p.requires_grad = False` before `task_model.adapt(adaptation_loss)`.  The
clone's parameters are `clone()`s of the meta-parameters (non-leaf tensors
that stay connected to them), and the loop fails with "you can only change
requires_grad flags of leaf variables."  Re-created as a reduced
`clone_module` (parameters replaced by their clones, as learn2learn does),
the adaptation step and the user's meta-training loop.
Buggy line: `p.requires_grad = False` on the clone's parameters.
Source: https://github.com/learnables/learn2learn/issues/271"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def clone_module(module):
    clone = type(module).__new__(type(module))
    clone.__dict__ = module.__dict__.copy()
    clone._parameters = {name: (p.clone() if p is not None else None) for name, p in module._parameters.items()}
    clone._modules = {name: clone_module(child) for name, child in module._modules.items()}
    return clone


def update_module(module, grads, lr):
    params = list(module._parameters.items())
    for (name, p), g in zip(params, grads[:len(params)]):
        module._parameters[name] = p - lr * g
    grads = grads[len(params):]
    for child in module._modules.values():
        n = len(list(child.parameters()))
        update_module(child, grads[:n], lr)
        grads = grads[n:]


class SRNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Conv2d(1, 4, 3, padding=1)
        self.meta_block = nn.Sequential(nn.Conv2d(4, 4, 3, padding=1), nn.ReLU())
        self.tail = nn.Conv2d(4, 1, 3, padding=1)

    def forward(self, x):
        return self.tail(self.meta_block(self.head(x))) + x


class MAML(nn.Module):
    def __init__(self, model, lr):
        super().__init__()
        self.module, self.lr = model, lr

    def clone(self):
        return MAML(clone_module(self.module), self.lr)

    def adapt(self, loss):
        params = [p for p in self.module.parameters() if p.requires_grad]
        grads = torch.autograd.grad(loss, params, create_graph=True, allow_unused=True)
        grads = [g if g is not None else torch.zeros_like(p) for p, g in zip(params, grads)]
        update_module(self.module, grads, self.lr)

    def forward(self, x):
        return self.module(x)


def run():
    torch.manual_seed(0)
    maml = MAML(SRNet(), lr=0.01)
    opt = torch.optim.Adam(maml.parameters(), lr=1e-3)
    low_res, gt = torch.rand(2, 1, 8, 8), torch.rand(2, 1, 8, 8)
    opt.zero_grad()
    task_model = maml.clone()
    adaptation_loss = F.l1_loss(gt, task_model(low_res))
    for name, p in task_model.module.meta_block.named_parameters():
        p.requires_grad = False  # missed: no rule (requires_grad set on a non-leaf clone)
    task_model.adapt(adaptation_loss)
    evaluation_loss = F.l1_loss(gt, task_model(low_res))
    evaluation_loss.backward()
    opt.step()
