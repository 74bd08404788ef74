"""Linear regression with gradient descent written out, as tutorials teach autograd: the weights
are updated under no_grad from `.grad`, but `.grad` is never cleared, so every backward() adds
the new gradient to all the earlier ones and each step applies their sum (no error; the fit
oscillates instead of converging). The step tutorials warn about: "Deep Learning with PyTorch
Step-by-Step" (Godoy), chapter 1, shows the gradients doubling when the step runs twice, and
clears them with `w.grad.zero_()` after the update."""
import torch

torch.manual_seed(0)
x = torch.linspace(-1, 1, 20).unsqueeze(1)
y = 3 * x + 0.5 + 0.1 * torch.randn(20, 1)
w = torch.zeros(1, requires_grad=True)
b = torch.zeros(1, requires_grad=True)
learning_rate = 0.1
for epoch in range(20):
    loss = ((x * w + b - y) ** 2).mean()
    loss.backward()  # PRIMARY
    with torch.no_grad():
        w -= learning_rate * w.grad
        b -= learning_rate * b.grad
result = [w.detach().clone(), b.detach().clone()]
