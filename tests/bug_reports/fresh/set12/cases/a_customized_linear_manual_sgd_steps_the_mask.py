"""CustomizedLinear (a linear layer whose connections are restricted by a fixed 0/1 mask) keeps its
mask as a parameter that does not require grad, `self.mask = nn.Parameter(mask, requires_grad=False)`,
so that it moves with the module. Its usage example trains with a hand-written SGD step over
`model.parameters()`, `param -= learning_rate * param.grad`; the mask is one of those parameters
and its `.grad` is None, so the first update raises "TypeError: unsupported operand type(s) for *:
'float' and 'NoneType'".
Source: https://github.com/uchida-takumi/CustomizedLinear/issues/2 ("error in test":
`param -= learning_rate*param.grad` raises "TypeError: unsupported operand type(s) for *: 'float'
and 'NoneType'"; author: "the important change is adding `if param.requires_grad:`").
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class CustomizedLinear(nn.Module):
    def __init__(self, mask, bias=True):
        super().__init__()
        self.input_features, self.output_features = mask.shape
        self.mask = nn.Parameter(mask.t().float(), requires_grad=False)
        self.weight = nn.Parameter(torch.randn(self.output_features, self.input_features) * 0.3)
        self.bias = nn.Parameter(torch.zeros(self.output_features)) if bias else None

    def forward(self, x):
        return F.linear(x, self.weight * self.mask, self.bias)


mask = torch.tensor([[1, 0, 1], [0, 1, 1], [1, 1, 0], [0, 0, 1]])
model = nn.Sequential(CustomizedLinear(mask), nn.ReLU(), nn.Linear(3, 1))
x = torch.randn(16, 4)
y = torch.randn(16, 1)
learning_rate = 0.05

losses = []
for t in range(5):
    loss = F.mse_loss(model(x), y)
    model.zero_grad()
    loss.backward()
    # Update the weights
    with torch.no_grad():
        for param in model.parameters():
            param -= learning_rate * param.grad
    losses.append(loss.detach())

result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
