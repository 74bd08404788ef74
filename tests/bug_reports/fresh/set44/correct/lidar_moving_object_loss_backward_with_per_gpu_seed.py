"""LiDAR moving-object segmentation on range images of point clouds (a RangeNet++-style trainer):
with more than one GPU the trainer calls `loss_m.backward(idx)` with `idx = torch.ones(n_gpus)`,
a seed per GPU, written for a PyTorch whose data-parallel loss kept one value per device. The loss
here is computed once, after the outputs are gathered, and is a 0-d tensor, so training on four
GPUs stops at once: "Mismatch in shape: grad_output[0] has a shape of torch.Size([4]) and
output[0] has a shape of torch.Size([])". The maintainers point to the PyTorch version and the
forum answer: the loss is a scalar, call `backward()` without a seed. (Re-created on the CPU: the
reporter's four devices are the `n_gpus` the trainer counted; `nn.DataParallel` is left out, as
it runs the module unchanged on one device.)
Source: https://github.com/PRBonn/LiDAR-MOS/issues/35
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class RangeSegmenter(nn.Module):
    def __init__(self, in_channels=5, n_classes=3):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(in_channels, 16, 3, padding=1), nn.ReLU(),
                                     nn.Conv2d(16, 16, 3, padding=1), nn.ReLU())
        self.head = nn.Conv2d(16, n_classes, 1)

    def forward(self, x):
        return F.softmax(self.head(self.encoder(x)), dim=1)


def soft_iou_loss(probas, labels, n_classes=3):
    one_hot = F.one_hot(labels, n_classes).permute(0, 3, 1, 2).float()
    intersection = (probas * one_hot).sum(dim=(0, 2, 3))
    union = (probas + one_hot - probas * one_hot).sum(dim=(0, 2, 3))
    return (1 - intersection / union.clamp(min=1e-8)).mean()


class Trainer:
    def __init__(self, model, n_gpus):
        self.model = model
        self.n_gpus = n_gpus
        self.criterion = nn.NLLLoss()
        self.ls = soft_iou_loss
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def train_epoch(self, train_loader):
        losses = []
        for proj_in, proj_labels in train_loader:
            output = self.model(proj_in)
            loss_m = self.criterion(torch.log(output.clamp(min=1e-8)), proj_labels) + self.ls(output, proj_labels.long())
            self.optimizer.zero_grad()
            loss_m.backward()
            self.optimizer.step()
            losses.append(loss_m.item())
        return losses


scans = torch.randn(12, 5, 16, 32)
labels = torch.randint(0, 3, (12, 16, 32))
loader = [(scans[i:i + 4], labels[i:i + 4]) for i in range(0, 12, 4)]

trainer = Trainer(RangeSegmenter(), n_gpus=4)
losses = []
for epoch in range(2):
    losses += trainer.train_epoch(loader)

result = {"losses": torch.tensor(losses), "params": [p.detach().clone() for p in trainer.model.parameters()]}
