# message: element 0 of tensors does not require grad and does not have a grad_fn
# code: AD307 (catalogue: decorator_no_grad_cut)
# set: 30
# trigger: a Lightning-like module computes the batch's logits in its on_train_batch_start hook, decorated
#   with @torch.no_grad() (the hook was first written to log the accuracy before the step), caches them on
#   self, and training_step's loss reads the cached logits
# source: none found; the pattern as users write it (work moved into a hook that was decorated for logging)
# results: losses, module
import torch
from torch import nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
        self.accuracies = []

    def on_train_batch_start(self, batch):  # PRIMARY
        features, labels = batch
        self.logits = self.net(features)
        self.accuracies.append((self.logits.argmax(1) == labels).float().mean())

    def training_step(self, batch):
        _, labels = batch
        return nn.functional.cross_entropy(self.logits, labels)


class Trainer:
    def fit(self, module, batches):
        optimizer = torch.optim.SGD(module.parameters(), lr=0.1)
        losses = []
        for batch in batches:
            module.on_train_batch_start(batch)
            optimizer.zero_grad()
            loss = module.training_step(batch)
            loss.backward()
            optimizer.step()
            losses.append(loss.detach())
        return losses


torch.manual_seed(0)
module = Classifier()
batches = [(torch.randn(5, 4), torch.randint(0, 3, (5,))) for _ in range(3)]
losses = Trainer().fit(module, batches)
