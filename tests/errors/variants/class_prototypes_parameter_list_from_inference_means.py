# message: Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.
# code: AD111 (catalogue: inference_requires_grad)
# set: 12
# trigger: a prototype classifier computes each class's mean embedding in a method decorated with
#   @torch.inference_mode() and keeps the means in an nn.ParameterList (the list turns each tensor
#   into a Parameter, which asks for requires_grad)
# source: none found; the pattern as users write it (prototypes initialised from class means)
# results: losses, model
import torch
from torch import nn


class PrototypeClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(3, 4)
        self.prototypes = nn.ParameterList()

    @torch.inference_mode()  # PRIMARY
    def class_means(self, x, labels):
        return [self.encoder(x[labels == c]).mean(dim=0) for c in range(2)]

    def initialise(self, x, labels):
        for mean in self.class_means(x, labels):
            self.prototypes.append(mean)

    def forward(self, x):
        return -torch.cdist(self.encoder(x), torch.stack(list(self.prototypes)))


torch.manual_seed(0)
model = PrototypeClassifier()
x, labels = torch.randn(6, 3), torch.tensor([0, 1, 0, 1, 0, 1])
model.initialise(x, labels)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(x), labels)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
