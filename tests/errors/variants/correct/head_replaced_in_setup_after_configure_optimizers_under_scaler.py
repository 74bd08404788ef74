# message: No inf checks were recorded for this optimizer.
# code: AD167 (catalogue: amp_step_without_gradients)
# set: 29
# trigger: a linear probe under GradScaler: the Trainer-like fit() asks the module for its optimizer
#   (configure_optimizers() over the parameters that require grad: the frozen backbone's are left out,
#   only the head's are in) and then calls setup(), which replaces the head by one sized for the
#   dataset's classes; the optimizer holds the old head, which the loss no longer reaches
# source: none found; the pattern as users write it (a head resized for the dataset after the optimizer was built)
# results: losses, module.head
import torch
from torch import nn


class LinearProbe(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(4, 6), nn.ReLU())
        self.backbone.requires_grad_(False)
        self.head = nn.Linear(6, 2)

    def setup(self, classes):
        if self.head.out_features != classes:
            self.head = nn.Linear(6, classes)

    def configure_optimizers(self):
        return torch.optim.SGD([p for p in self.parameters() if p.requires_grad], lr=0.1)

    def forward(self, x):
        return self.head(self.backbone(x))


class AmpTrainer:
    def __init__(self, classes):
        self.classes = classes
        self.scaler = torch.amp.GradScaler("cpu")

    def fit(self, module, batches):
        module.setup(self.classes)
        optimizer = module.configure_optimizers()  # PRIMARY
        losses = []
        for x, y in batches:
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(module(x), y)
            self.scaler.scale(loss).backward()
            self.scaler.step(optimizer)
            self.scaler.update()
            losses.append(loss.detach())
        return losses


torch.manual_seed(0)
module = LinearProbe()
batches = [(torch.randn(5, 4), torch.randint(0, 3, (5,))) for _ in range(3)]
losses = AmpTrainer(classes=3).fit(module, batches)
