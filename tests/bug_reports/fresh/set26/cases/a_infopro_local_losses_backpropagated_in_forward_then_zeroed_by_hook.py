"""Locally supervised semantic segmentation (InfoPro, blackfeather-wang/InfoPro-Pytorch, on an
mmsegmentation-style runner): the network is cut into local modules; during training `forward()`
runs each module, computes its local (auxiliary) loss and calls `backward()` on it right away,
and passes the detached features on to the next module. The runner's optimizer hook, left as
mmcv ships it, does `optimizer.zero_grad(); loss.backward(); optimizer.step()` in
`after_train_iter`: the `zero_grad()` there wipes the gradients the local losses put on every
module but the last before the step, so only the last module (and the decoder) is trained.
No error; "the network will of course converge. But the performance may drop". The author:
"If runner.optimizer.zero_grad() is placed in after_train_iter, the gradients of all local
modules except for the last one will be deleted ... only the last module will be trained" (the
repository moves `zero_grad()` to `before_train_iter`).
Source: https://github.com/blackfeather-wang/InfoPro-Pytorch/issues/1
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

NUM_CLASSES = 3


class LocalModule(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.block = nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU())
        self.aux_head = nn.Conv2d(cout, NUM_CLASSES, 1)

    def forward(self, x):
        return self.block(x)


class InfoProSegmentor(nn.Module):
    def __init__(self):
        super().__init__()
        self.local_modules = nn.ModuleList([LocalModule(3, 8), LocalModule(8, 8), LocalModule(8, 8)])
        self.decode_head = nn.Conv2d(8, NUM_CLASSES, 1)

    def forward_train(self, img, gt):
        x = img
        for module in self.local_modules[:-1]:
            x = module(x)
            local_loss = 0.5 * F.cross_entropy(module.aux_head(x), gt)
            local_loss.backward()
            x = x.detach()
        x = self.local_modules[-1](x)
        return F.cross_entropy(self.decode_head(x), gt)


class OptimizerHook:
    def after_train_iter(self, runner):
        runner.optimizer.zero_grad()
        runner.outputs["loss"].backward()
        runner.optimizer.step()


class IterBasedRunner:
    def __init__(self, model, optimizer, hooks):
        self.model = model
        self.optimizer = optimizer
        self.hooks = hooks
        self.outputs = {}
        self.log = []

    def call_hook(self, name):
        for hook in self.hooks:
            if hasattr(hook, name):
                getattr(hook, name)(self)

    def train(self, data_loader, epochs):
        self.model.train()
        for _ in range(epochs):
            for img, gt in data_loader:
                self.call_hook("before_train_iter")
                loss = self.model.forward_train(img, gt)
                self.outputs = {"loss": loss}
                self.call_hook("after_train_iter")
                self.log.append(loss.item())


def make_data(n=4, batch=2, size=8):
    data = []
    for _ in range(n):
        img = torch.randn(batch, 3, size, size)
        gt = (img[:, 0] > 0).long() + (img[:, 1] > 1).long()
        data.append((img, gt))
    return data


model = InfoProSegmentor()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
runner = IterBasedRunner(model, optimizer, [OptimizerHook()])
runner.train(make_data(), epochs=3)

result = {
    "losses": torch.tensor(runner.log),
    "params": [p.detach().clone() for p in model.parameters()],
}
