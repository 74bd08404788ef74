# message: can't optimize a non-leaf Tensor
# code: AD119 (catalogue: non_leaf_optimizer)
# set: 10
# trigger: a prototype classifier class builds its learned prototype matrix with torch.stack of
#   per-class vectors each made with requires_grad=True; the stack is computed, not a leaf, and the
#   class hands it to the optimizer with the encoder's parameters
# source: none found; the pattern as users write it (prototypical / centre-based classifiers)
# results: losses, classifier.prototypes
import torch
from torch import nn
import torch.nn.functional as F


class PrototypeClassifier:
    def __init__(self, classes, width):
        self.encoder = nn.Linear(3, width)
        self.prototypes = torch.stack([torch.randn(width) for _ in range(classes)]).requires_grad_()  # PRIMARY

    def logits(self, x):
        return -torch.cdist(self.encoder(x), self.prototypes)

    def parameters(self):
        return [self.prototypes, *self.encoder.parameters()]


torch.manual_seed(0)
classifier = PrototypeClassifier(classes=3, width=4)
optimizer = torch.optim.SGD(classifier.parameters(), lr=0.1)
x, labels = torch.randn(6, 3), torch.tensor([0, 1, 2, 0, 1, 2])
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.cross_entropy(classifier.logits(x), labels)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
