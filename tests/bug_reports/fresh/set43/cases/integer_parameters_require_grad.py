"""Gradient descent by hand on a line fit: the slope and intercept are made with
`torch.tensor(0, requires_grad=True)`, integer literals, so the tensors are int64 and PyTorch refuses
at once: "Only Tensors of floating point and complex dtype can require gradients". The post's
point: calculus needs values that can move by arbitrarily small amounts; the fix is one keyword
argument, `dtype=torch.float32`.
Source: https://imaddabbura.github.io/posts/dl/why-autograd-needs-floats.html
expect: raises"""
import torch

torch.manual_seed(0)

x = torch.linspace(-1, 1, 50)
y = 3 * x + 2 + 0.1 * torch.randn(50)

slope = torch.tensor(0, requires_grad=True)
intercept = torch.tensor(0, requires_grad=True)

learning_rate = 0.1
losses = []
for step in range(100):
    prediction = slope * x + intercept
    loss = ((prediction - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        slope -= learning_rate * slope.grad
        intercept -= learning_rate * intercept.grad
    slope.grad.zero_()
    intercept.grad.zero_()
    losses.append(loss.item())

result = {"slope": slope.detach().clone(), "intercept": intercept.detach().clone(),
          "losses": torch.tensor(losses)}
