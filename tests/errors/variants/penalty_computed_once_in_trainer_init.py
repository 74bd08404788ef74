# message: Trying to backward through the graph a second time (or directly access saved tensors after they
#   have already been freed). Saved intermediate values of the graph are freed when you call
#   .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the
#   graph a second time or if you need to access saved tensors after calling backward.
# code: AD302 (catalogue: backward_twice)
# set: 10
# trigger: a Trainer-like class computes its L2 penalty over the model's parameters once, in
#   __init__, and adds it to every step's loss; the first backward() frees the penalty's graph and
#   the second step's backward() goes through it again
# source: none found; the pattern as users write it (regularisers computed where the trainer is set up)
# results: trainer.losses, model
import torch
from torch import nn
import torch.nn.functional as F


class Trainer:
    def __init__(self, model, weight_decay):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.weight_decay = weight_decay
        self.penalty = weight_decay * sum(p.pow(2).sum() for p in model.parameters())  # PRIMARY
        self.losses = []

    def step(self, x, y):
        self.optimizer.zero_grad()
        loss = F.mse_loss(self.model(x), y) + self.penalty
        loss.backward()
        self.optimizer.step()
        self.losses.append(loss.item())


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
trainer = Trainer(model, weight_decay=0.01)
x, y = torch.randn(6, 3), torch.randn(6, 1)
for _ in range(2):
    trainer.step(x, y)
