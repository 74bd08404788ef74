"""Magnitude pruning while fine-tuning an image classifier with a frozen stem (neuralmagic/sparseml,
the pruning modifier under PyTorch Lightning): the modifier registers a gradient hook on the weight
of every prunable layer, to zero the gradient of pruned entries, without looking at whether the
weight takes part in training; the frozen stem's weight does not require grad, and registering a
hook on it raises before the first step.
Source: https://github.com/neuralmagic/sparseml/issues/1438 ("RuntimeError: cannot register a hook
on a tensor that doesn't require gradient"; the fix taken up in PR #1463: register the mask hook
only where `param.requires_grad`).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

SPARSITY, CLASSES, BATCH = 0.5, 4, 8


class SmallConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.block = nn.Conv2d(8, 8, 3, padding=1)
        self.head = nn.Linear(8, CLASSES)

    def forward(self, images):
        hidden = F.relu(self.stem(images))
        hidden = F.relu(self.block(hidden)) + hidden
        return self.head(hidden.mean(dim=(2, 3)))


class MagnitudePruner:
    """Keeps the largest weights of each prunable layer and masks the gradient of the others."""

    def __init__(self, model, sparsity):
        self.layers = [m for m in model.modules() if isinstance(m, (nn.Conv2d, nn.Linear))]
        self.masks = []
        for layer in self.layers:
            weight = layer.weight
            threshold = weight.detach().abs().flatten().kthvalue(int(sparsity * weight.numel())).values
            self.masks.append((weight.detach().abs() > threshold).float())
        for layer, mask in zip(self.layers, self.masks):
            if layer.weight.requires_grad:
                layer.weight.register_hook(lambda grad, mask=mask: grad * mask)
        self.apply_masks()

    @torch.no_grad()
    def apply_masks(self):
        for layer, mask in zip(self.layers, self.masks):
            layer.weight.mul_(mask)


model = SmallConvNet()
model.stem.requires_grad_(False)  # the pretrained stem stays frozen while fine-tuning
optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1, momentum=0.9)
pruner = MagnitudePruner(model, SPARSITY)

images = torch.randn(BATCH, 3, 8, 8)
labels = torch.randint(0, CLASSES, (BATCH,))
losses = []
for step in range(3):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(images), labels)
    loss.backward()
    optimizer.step()
    pruner.apply_masks()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
