"""YOLOv5's `train.py` froze the parameters named in `freeze` with
`v.requires_grad = False`, then, a few lines later, built the optimizer's
parameter groups in a loop that starts with `v.requires_grad = True` for
every parameter: the freeze is undone and the "frozen" layers train.
Nothing raises; the reporter: "all parameters have been set as
requires_grad=True, which overwrite the previous settings".
Buggy line: `v.requires_grad = True` in the parameter-group loop.
Expected finding: ADL016 (nothing is frozen).
Source: https://github.com/ultralytics/yolov5/issues/1213"""
import torch
import torch.nn as nn
import torch.optim as optim


class Model(nn.Module):
    def __init__(self, nc=2):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.SiLU())
        self.head = nn.Conv2d(4, nc, 1)

    def forward(self, x):
        return self.head(self.backbone(x)).mean((2, 3))


def build(freeze=('backbone.0.',), lr0=0.01, momentum=0.937, weight_decay=5e-4):
    model = Model()

    # Freeze
    if any(freeze):
        for k, v in model.named_parameters():
            if any(x in k for x in freeze):
                print('freezing %s' % k)
                v.requires_grad = False

    # Optimizer
    pg0, pg1, pg2 = [], [], []  # optimizer parameter groups
    for k, v in model.named_parameters():
        v.requires_grad = True  # missed: ADL016
        if '.bias' in k:
            pg2.append(v)  # biases
        elif '.weight' in k and '.1.' not in k:
            pg1.append(v)  # apply weight decay
        else:
            pg0.append(v)  # all else
    optimizer = optim.SGD(pg0, lr=lr0, momentum=momentum, nesterov=True)
    optimizer.add_param_group({'params': pg1, 'weight_decay': weight_decay})
    optimizer.add_param_group({'params': pg2})
    return model, optimizer


def train(model, optimizer, batches):
    for imgs, targets in batches:
        loss = nn.functional.cross_entropy(model(imgs), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def bug_shows():
    """The convolution named in `freeze` still receives a gradient and moves."""
    torch.manual_seed(0)
    model, optimizer = build()
    frozen = model.backbone[0].weight
    before = frozen.detach().clone()
    train(model, optimizer, [(torch.randn(2, 3, 8, 8), torch.tensor([0, 1]))])
    return frozen.grad is not None and not torch.equal(before, frozen.detach())
