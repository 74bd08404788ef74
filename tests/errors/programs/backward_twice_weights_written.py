import torch

torch.manual_seed(0)
model = torch.nn.Linear(3, 1)
x = torch.randn(5, 3)


def climb(parameters, rho=0.05):
    with torch.no_grad():
        for p in parameters:
            p.add_(rho * p.grad)


output = model(x)
output.pow(2).mean().backward()
climb(model.parameters())
model.zero_grad()
output.abs().mean().backward()  # PRIMARY
