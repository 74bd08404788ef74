# message: Inference tensors cannot be saved for backward. Please do not use Tensors created in inference
#   mode in computation tracked by autograd. To work around this, you can make a clone to get a normal
#   tensor and use it in autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`.
# code: AD109 (catalogue: inference_saved)
# set: 11
# trigger: a Trainer-like class memoises the frozen backbone's features per batch index in a dict;
#   the dict is first filled by the validation pass, which runs under torch.inference_mode(), and
#   the next training epoch reads the cached features into the trained head (nn.Linear saves them)
# source: none found; the pattern as users write it (feature caches for linear probing shared
#   between training and validation)
# results: trainer.losses, head
import torch
from torch import nn


class ProbeTrainer:
    def __init__(self, backbone, head):
        self.backbone = backbone
        self.head = head
        self.optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
        self.cache = {}
        self.losses = []

    def features(self, index, x):
        if index not in self.cache:
            with torch.no_grad():
                self.cache[index] = self.backbone(x)
        return self.cache[index]

    def validate(self, batches):
        with torch.inference_mode():  # PRIMARY
            return sum((self.head(self.features(i, x)) - y).pow(2).mean().item()
                       for i, (x, y) in enumerate(batches))

    def train_epoch(self, batches):
        for i, (x, y) in enumerate(batches):
            self.optimizer.zero_grad()
            loss = (self.head(self.features(i, x)) - y).pow(2).mean()
            loss.backward()
            self.optimizer.step()
            self.losses.append(loss.item())


torch.manual_seed(0)
backbone = nn.Sequential(nn.Linear(3, 4), nn.Tanh())
head = nn.Linear(4, 1)
trainer = ProbeTrainer(backbone, head)
batches = [(torch.randn(5, 3), torch.randn(5, 1)) for _ in range(2)]
trainer.losses.append(trainer.validate(batches))
trainer.train_epoch(batches)
