# message: torch.utils.checkpoint: A different number of tensors was saved during the original forward
#   and recomputation.
# code: AD125 (catalogue: checkpoint_recompute_mismatch)
# set: 12
# trigger: a checkpointed block applies dropout only while its rate is positive; the Trainer-like
#   step anneals the rate (to 0 at the last step) between the loss and loss.backward(), so the
#   recomputation skips the dropout the original forward ran
# source: none found; the pattern as users write it (schedules stepped before backward())
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 3)
        self.rate = 0.5

    def body(self, x):
        h = self.linear(x)
        if self.rate > 0:
            h = F.dropout(h, self.rate)
        return torch.tanh(h)

    def forward(self, x):
        return checkpoint(self.body, x, use_reentrant=False)


class Trainer:
    def __init__(self, block, steps):
        self.block = block
        self.steps = steps
        self.optimizer = torch.optim.SGD(block.parameters(), lr=0.1)

    def step(self, index, x):
        self.optimizer.zero_grad()
        loss = self.block(x).pow(2).mean()
        self.block.rate = 0.5 * (1 - (index + 1) / self.steps)  # PRIMARY
        loss.backward()
        self.optimizer.step()
        return loss.item()


torch.manual_seed(0)
model = Block()
trainer = Trainer(model, steps=2)
x = torch.randn(4, 3)
losses = [trainer.step(index, x) for index in range(2)]
