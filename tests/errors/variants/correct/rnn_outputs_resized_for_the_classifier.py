# message: cannot resize variables that require grad
# code: AD133 (catalogue: resize_requires_grad)
# set: 7
# trigger: a sequence classifier's forward flattens the GRU outputs (batch, time, hidden) for the
#   linear head with out.resize_(batch, time * hidden), as one would with a NumPy array
# source: none found; the pattern as users write it
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class SequenceClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(3, 4, batch_first=True)
        self.head = nn.Linear(5 * 4, 2)

    def forward(self, x):
        out, _ = self.gru(x)
        batch, time, hidden = out.shape
        flat = out.reshape(batch, time * hidden)  # PRIMARY
        return self.head(flat)


torch.manual_seed(0)
model = SequenceClassifier()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, labels = torch.randn(2, 5, 3), torch.tensor([0, 1])
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), labels)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
