# message: unsupported operand type(s) for *: 'float' and 'NoneType'
# code: AD308 (catalogue: grad_of_non_leaf)
# set: 4
# trigger: a hand-written linear regression class creates its weights with requires_grad=True and
#   then converts them with .double(); its gradient-descent step reads self.w.grad, None
# source: none found; the pattern as users write it
# results: losses, model.w
import torch


class LinearRegression:
    def __init__(self, features):
        self.w = torch.zeros(features, 1, dtype=torch.float64, requires_grad=True)  # PRIMARY

    def loss(self, x, y):
        return (x @ self.w - y).pow(2).mean()

    def step(self, lr):
        with torch.no_grad():
            self.w -= lr * self.w.grad
            self.w.grad = None


torch.manual_seed(0)
model = LinearRegression(3)
x, y = torch.randn(8, 3, dtype=torch.float64), torch.randn(8, 1, dtype=torch.float64)
losses = []
for _ in range(3):
    loss = model.loss(x, y)
    loss.backward()
    model.step(0.1)
    losses.append(loss.item())
