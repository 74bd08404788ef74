# message: add(sparse, dense) is not supported. Use add(dense, sparse) instead.
# code: AD152 (catalogue: sparse_gradient_noise)
# set: 16
# trigger: a bag-of-words classifier with nn.EmbeddingBag(sparse=True) adds L2 weight decay to every
#   gradient by hand, p.grad = p.grad.to_dense() + wd * p, before a plain SGD step
# source: none found; the pattern as users write it (hand-written weight decay over model.parameters())
# results: model
import torch
from torch import nn


class BagOfWords(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.EmbeddingBag(20, 4, mode="mean", sparse=True)
        self.classifier = nn.Linear(4, 2)

    def forward(self, tokens, offsets):
        return self.classifier(self.embedding(tokens, offsets))


def apply_weight_decay(model, wd):
    for p in model.parameters():
        if p.grad is not None:
            p.grad = p.grad.to_dense() + wd * p.detach()  # PRIMARY


torch.manual_seed(0)
model = BagOfWords()
tokens, offsets = torch.tensor([1, 4, 7, 2, 9, 4, 11]), torch.tensor([0, 3, 5])
labels = torch.tensor([0, 1, 1])
for _ in range(3):
    model.zero_grad()
    nn.functional.cross_entropy(model(tokens, offsets), labels).backward()
    apply_weight_decay(model, 1e-2)
    with torch.no_grad():
        for p in model.parameters():
            p -= 0.1 * p.grad
