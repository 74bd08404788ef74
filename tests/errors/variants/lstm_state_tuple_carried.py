# message: Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed).
# code: AD302 (catalogue: backward_twice)
# set: 2
# trigger: an LSTM's (h, c) state is carried from batch to batch as a tuple assigned after
#   backward(), inside a Trainer-like class's method
# source: none found; the pattern as users write it
# results: losses, trainer.lstm, trainer.head
import torch
from torch import nn
import torch.nn.functional as F


class Trainer:
    def __init__(self):
        self.lstm, self.head = nn.LSTM(3, 4, batch_first=True), nn.Linear(4, 1)
        params = list(self.lstm.parameters()) + list(self.head.parameters())
        self.optimizer = torch.optim.SGD(params, lr=0.1)

    def fit(self, batches):
        losses = []
        state = (torch.zeros(1, 2, 4), torch.zeros(1, 2, 4))
        for x, y in batches:
            self.optimizer.zero_grad()
            out, (h, c) = self.lstm(x, state)
            loss = F.mse_loss(self.head(out[:, -1]), y)
            losses.append(loss.item())
            loss.backward()
            self.optimizer.step()
            state = (h, c)  # PRIMARY
        return losses


torch.manual_seed(0)
trainer = Trainer()
losses = trainer.fit([(torch.randn(2, 4, 3), torch.randn(2, 1)) for _ in range(3)])
