# message: Cannot insert a Tensor that requires grad as a constant. Consider making it a parameter
#   or input, or detaching the gradient
# code: AD143 (catalogue: trace_constant_requires_grad)
# set: 7
# trigger: a calibrated classifier keeps its learned temperature as a plain tensor attribute
#   (torch.ones(1, requires_grad=True), not nn.Parameter) and is exported with torch.jit.trace
# source: https://github.com/pytorch/pytorch/issues/12946 (a tensor that requires grad, not an input, traced)
# results: losses, outputs, model
import torch
from torch import nn
import torch.nn.functional as F


class Calibrated(nn.Module):
    def __init__(self):
        super().__init__()
        self.classifier = nn.Linear(3, 2)
        self.temperature = torch.ones(1, requires_grad=True)  # PRIMARY

    def forward(self, x):
        return self.classifier(x) / self.temperature


torch.manual_seed(0)
model = Calibrated()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, labels = torch.randn(4, 3), torch.tensor([0, 1, 1, 0])
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), labels)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
traced = torch.jit.trace(model, x)
outputs = traced(x)
