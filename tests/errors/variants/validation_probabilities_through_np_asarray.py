# message: Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.
# code: AD113 (catalogue: numpy_requires_grad)
# set: 5
# trigger: a Trainer-like class's validation method, run without torch.no_grad(), turns the
#   model's probabilities into a NumPy array with np.asarray for a metric
# source: none found; the pattern as users write it
# results: trainer.losses, trainer.accuracies, model
import numpy as np
import torch
from torch import nn
import torch.nn.functional as F


class Trainer:
    def __init__(self, model):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.losses, self.accuracies = [], []

    def validate(self, x, y):
        probabilities = torch.softmax(self.model(x), dim=1)
        predicted = np.asarray(probabilities).argmax(axis=1)  # PRIMARY
        self.accuracies.append(float((predicted == y.numpy()).mean()))

    def fit(self, batches, validation):
        for x, y in batches:
            self.optimizer.zero_grad()
            loss = F.cross_entropy(self.model(x), y)
            loss.backward()
            self.optimizer.step()
            self.losses.append(loss.item())
            self.validate(*validation)


torch.manual_seed(0)
model = nn.Linear(4, 3)
batches = [(torch.randn(6, 4), torch.randint(0, 3, (6,))) for _ in range(2)]
trainer = Trainer(model)
trainer.fit(batches, (torch.randn(5, 4), torch.randint(0, 3, (5,))))
