# message: one of the variables needed for gradient computation has been modified by an inplace
#   operation: [torch.FloatTensor [4, 4]], which is output 0 of AsStrided, is at version 2; expected
#   version 1 instead. Hint: enable anomaly detection to find the operation that failed to compute its
#   gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).
# code: AD103 (catalogue: saved_tensor_modified; AD103 is the recorder's code for a write made by
#   optimizer.step())
# set: 13
# trigger: a multi-task loop computes the shared trunk's features and every task's loss once, then
#   updates task by task: zero_grad(), backward(retain_graph=True), optimizer.step(); the first step
#   writes in place the weights the next task's backward() needs
# source: none found; the pattern as users write it (retain_graph=True added after "backward through
#   the graph a second time", then the optimizer's in-place update)
# results: model, losses
import torch
import torch.nn.functional as F
from torch import nn


class MultiTask(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 4), nn.Tanh())
        self.heads = nn.ModuleList([nn.Linear(4, 1) for _ in range(2)])


torch.manual_seed(0)
model = MultiTask()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(6, 3)
targets = [torch.randn(6, 1), torch.randn(6, 1)]
losses = []
for _ in range(2):
    for head, y in zip(model.heads, targets):
        loss = F.mse_loss(head(model.trunk(x)), y)  # PRIMARY
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
