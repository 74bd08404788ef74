# message: save_for_backward can only save variables, but argument 1 is of type int
# code: AD122 (catalogue: save_for_backward_non_tensor)
# set: 5
# trigger: a hand-written power Function gives its integer exponent to ctx.save_for_backward with
#   the input; a module in a training loop applies it with an exponent from its constructor
# source: none found; the pattern as users write it
# results: losses, model, input_grad
import torch
from torch import nn
import torch.nn.functional as F


class Power(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, exponent):
        ctx.save_for_backward(x, torch.tensor(exponent))  # PRIMARY
        return x ** exponent

    @staticmethod
    def backward(ctx, grad_output):
        x, exponent = ctx.saved_tensors
        return grad_output * exponent * x ** (exponent - 1), None


class PolynomialFeatures(nn.Module):
    def __init__(self, exponent):
        super().__init__()
        self.exponent = exponent
        self.lin = nn.Linear(3, 1)

    def forward(self, x):
        return self.lin(Power.apply(x, self.exponent))


torch.manual_seed(0)
model = PolynomialFeatures(exponent=3)
inputs = torch.randn(4, 3, requires_grad=True)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
losses = []
for _ in range(2):
    optimizer.zero_grad()
    loss = F.mse_loss(model(inputs), torch.ones(4, 1))
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
input_grad = inputs.grad
