"""yolo3-pytorch (bubbliiiing/yolo3-pytorch), utils/utils_fit.py: for a meta-learning experiment the
user added `grad = torch.autograd.grad(loss_value, model_train.parameters(), retain_graph=True)`
to `fit_one_epoch`. train.py trains in two stages and, in the first (`Freeze_Train`), sets
`param.requires_grad = False` on every backbone parameter, so the call fails with "One of the
differentiated Tensors does not require grad" ("is there a layer defined somewhere that does not
need a gradient?"). The thread has no answer; the correct version asks only for the parameters
being trained in this stage (`[p for p in model_train.parameters() if p.requires_grad]`), which
keeps the stage's meaning (the frozen backbone gets no update either way).
Source: https://github.com/bubbliiiing/yolo3-pytorch/issues/110
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class YoloBody(nn.Module):
    def __init__(self, num_anchors=3, num_classes=2):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.LeakyReLU(0.1), nn.Conv2d(8, 8, 3, stride=2, padding=1))
        self.head = nn.Conv2d(8, num_anchors * (5 + num_classes), 1)

    def forward(self, x):
        return self.head(self.backbone(x))


def yolo_loss(output, targets):
    b, _, h, w = output.shape
    pred = output.view(b, 3, 7, h, w)
    obj = F.binary_cross_entropy_with_logits(pred[:, :, 4], targets["obj"])
    box = F.mse_loss(torch.sigmoid(pred[:, :, :4]), targets["box"])
    return obj + box


def fit_one_epoch(model_train, yolo_loss, optimizer, gen, inner_lr=0.01):
    history = []
    for images, targets in gen:
        optimizer.zero_grad()
        outputs = model_train(images)
        loss_value = yolo_loss(outputs, targets)
        grad = torch.autograd.grad(loss_value, [p for p in model_train.parameters() if p.requires_grad], retain_graph=True)
        grad_norm = torch.sqrt(sum((g ** 2).sum() for g in grad))
        loss_value.backward()
        optimizer.step()
        history.append(torch.stack([loss_value.detach(), grad_norm.detach()]))
    return history


model = YoloBody()
model_train = model.train()
gen = []
for _ in range(3):
    images = torch.randn(2, 3, 8, 8)
    targets = {"obj": (torch.rand(2, 3, 4, 4) > 0.8).float(), "box": torch.rand(2, 3, 4, 4, 4)}
    gen.append((images, targets))

Freeze_Train = True
if Freeze_Train:
    for param in model.backbone.parameters():
        param.requires_grad = False
optimizer = torch.optim.Adam(filter(lambda p: p.requires_grad, model_train.parameters()), lr=1e-3)

history = []
for epoch in range(2):
    history += fit_one_epoch(model_train, yolo_loss, optimizer, gen)

result = {"history": torch.stack(history), "params": [p.detach().clone() for p in model.parameters()]}
