# message: can't optimize a non-leaf Tensor
# code: AD119 (catalogue: non_leaf_optimizer)
# trigger: a hand-written regression class scales its weight at creation
#   (`self.w = torch.randn(..., requires_grad=True) / sqrt(fan_in)`) and hands its
#   parameters() list to the optimizer
# source: none found; the pattern as users write it
# results: losses, model.w, model.b
import torch
import torch.nn.functional as F


class LinearRegression:
    def __init__(self, fan_in):
        self.w = torch.randn(fan_in, 1, requires_grad=True) / fan_in ** 0.5  # PRIMARY
        self.b = torch.zeros(1, requires_grad=True)

    def parameters(self):
        return [self.w, self.b]

    def __call__(self, x):
        return x @ self.w + self.b


torch.manual_seed(0)
model = LinearRegression(3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(8, 3), torch.randn(8, 1)
losses = []
for _ in range(3):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    losses.append(loss.item())
    loss.backward()
    optimizer.step()
