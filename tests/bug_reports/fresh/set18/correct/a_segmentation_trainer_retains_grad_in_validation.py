"""Segmentation trainer for microscopy images (constantinpape/torch-em, DefaultTrainer): the shared
`_forward_and_loss` step calls `pred.retain_grad()` so that the gradient of the prediction can be
logged as an image. Validation runs the same step inside `torch.no_grad()`, where the prediction
does not require grad, and the first validation raises "can't retain_grad on Tensor that has
requires_grad=False".
Source: https://github.com/constantinpape/torch-em/pull/57 ("fix error connected to retain_grad()":
the merged fix keeps the gradient only where the prediction requires grad, i.e. during training).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.grad_norms = []

    def _forward_and_loss(self, x, y):
        pred = self.model(x)
        if pred.requires_grad:
            pred.retain_grad()
        loss = F.binary_cross_entropy_with_logits(pred, y)
        return pred, loss

    def train_iteration(self, x, y):
        self.optimizer.zero_grad()
        pred, loss = self._forward_and_loss(x, y)
        loss.backward()
        self.grad_norms.append(pred.grad.norm())
        self.optimizer.step()
        return loss.detach()

    def validate(self, x, y):
        with torch.no_grad():
            _, loss = self._forward_and_loss(x, y)
        return loss


model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 1, 1))
trainer = Trainer(model, torch.optim.Adam(model.parameters(), lr=1e-2))
images = torch.rand(3, 2, 1, 8, 8)
masks = (torch.rand(3, 2, 1, 8, 8) > 0.5).float()

train_losses, val_losses = [], []
for epoch in range(2):
    train_losses.append(trainer.train_iteration(images[0], masks[0]))
    train_losses.append(trainer.train_iteration(images[1], masks[1]))
    val_losses.append(trainer.validate(images[2], masks[2]))

result = {"train": torch.stack(train_losses), "val": torch.stack(val_losses),
          "grad_norms": torch.stack(trainer.grad_norms), "params": [p.detach().clone() for p in model.parameters()]}
