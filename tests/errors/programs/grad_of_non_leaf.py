import torch

torch.manual_seed(0)
x = torch.randn(8, 3, dtype=torch.float64)
y = x @ torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64)
w = torch.zeros(3, requires_grad=True).type(torch.float64)  # PRIMARY
for step in range(5):
    loss = ((x @ w - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
        w.grad.zero_()
