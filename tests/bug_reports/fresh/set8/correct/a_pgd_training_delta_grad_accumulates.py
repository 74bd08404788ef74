"""PGD adversarial training on MNIST-like images (fast_adversarial's mnist_train.py): the
perturbation `delta` keeps the same tensor across the attack iterations (only `delta.data` is
written), and `opt.zero_grad()` clears the model's gradients but never `delta.grad`, so each
iteration's `delta.grad` is the sum of all earlier iterations' gradients. The attack steps along
the sign of that running sum instead of the current gradient, and the model is trained on weaker
adversarial examples (no error).
Source: https://github.com/locuslab/fast_adversarial/issues/26 ("Probable gradient accumulation
bug in mnist_train.py": "delta.grad accumulates gradients over the inner maximization steps in
PGD"; the attack needs `delta.grad.zero_()` after each step, as the repository's CIFAR code does).
expect: silent"""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Flatten(), nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = nn.CrossEntropyLoss()
epsilon, alpha, attack_iters = 0.3, 0.1, 5
X = torch.rand(16, 1, 8, 8)
y = torch.randint(0, 10, (16,))
losses = []
for epoch in range(3):
    delta = torch.zeros_like(X).uniform_(-epsilon, epsilon)
    delta.data = torch.max(torch.min(1 - X, delta.data), 0 - X)
    for _ in range(attack_iters):
        delta.requires_grad = True
        output = model(X + delta)
        loss = criterion(output, y)
        opt.zero_grad()
        loss.backward()
        grad = delta.grad.detach()
        I = output.max(1)[1] == y
        delta.data[I] = torch.clamp(delta + alpha * torch.sign(grad), -epsilon, epsilon)[I]
        delta.data[I] = torch.max(torch.min(1 - X, delta.data), 0 - X)[I]
        delta.grad.zero_()
    delta = delta.detach()
    output = model(torch.clamp(X + delta, 0, 1))
    loss = criterion(output, y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
