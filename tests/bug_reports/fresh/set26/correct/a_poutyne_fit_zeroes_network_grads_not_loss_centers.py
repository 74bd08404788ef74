"""Face-embedding training with Poutyne's `Model(network, optimizer, loss_function)` training
loop: the loss is a softmax + center loss whose class centers are an `nn.Parameter` of the loss
module, and the user's optimizer covers both the network and the loss's centers. Poutyne's
`_fit_batch` cleared gradients with `self.model.zero_grad()` (the network) instead of
`self.optimizer.zero_grad()`, so the centers' gradients are never cleared: each step adds the
new gradient to the sum of all earlier ones and the centers move with the running sum. No error.
The reporter: "should It be `self.optimizer.zero_grad()` instead of `self.model.zero_grad()`?";
the maintainer: "I was actually wondering the same thing a while ago. I made a commit in the dev
branch."
Source: https://github.com/freud14/poutyne/issues/12
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

NUM_CLASSES, EMB = 4, 8


class CenterSoftmaxLoss(nn.Module):
    def __init__(self, num_classes=NUM_CLASSES, dim=EMB, weight=0.5):
        super().__init__()
        self.classifier = nn.Linear(dim, num_classes)
        self.centers = nn.Parameter(torch.randn(num_classes, dim))
        self.weight = weight

    def forward(self, embeddings, labels):
        ce = F.cross_entropy(self.classifier(embeddings), labels)
        center = ((embeddings - self.centers[labels]) ** 2).sum(dim=1).mean()
        return ce + self.weight * center


class Model:
    def __init__(self, model, optimizer, loss_function):
        self.model = model
        self.optimizer = optimizer
        self.loss_function = loss_function

    def _fit_batch(self, x, y):
        self.optimizer.zero_grad()
        loss = self.loss_function(self.model(x), y)
        loss.backward()
        self.optimizer.step()
        return float(loss)

    def fit_generator(self, train_generator, epochs):
        history = []
        for _ in range(epochs):
            self.model.train(True)
            history.append(sum(self._fit_batch(x, y) for x, y in train_generator) / len(train_generator))
        return history


def make_batches(n=5, batch=8):
    prototypes = torch.randn(NUM_CLASSES, 12) * 2
    batches = []
    for _ in range(n):
        y = torch.randint(0, NUM_CLASSES, (batch,))
        batches.append((prototypes[y] + 0.3 * torch.randn(batch, 12), y))
    return batches


network = nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, EMB))
criterion = CenterSoftmaxLoss()
optimizer = torch.optim.SGD(list(network.parameters()) + list(criterion.parameters()), lr=0.05)
model = Model(network, optimizer, criterion)
history = model.fit_generator(make_batches(), epochs=4)

result = {
    "history": torch.tensor(history),
    "network": [p.detach().clone() for p in network.parameters()],
    "loss_params": [p.detach().clone() for p in criterion.parameters()],
}
