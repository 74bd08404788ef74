"""A classifier trained with `nn.NLLLoss` on the raw output of its last Linear layer. NLLLoss
expects log-probabilities (the output of log_softmax) and does not normalise: on raw scores it is
`-score[target]`, which the network lowers without bound by growing the target's score, and the
other classes' scores get no gradient at all (no error; the loss goes down and below zero)."""
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 4))
criterion = nn.NLLLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(32, 6), torch.randint(0, 4, (32,))
for step in range(4):
    scores = model(x)
    loss = criterion(scores, y)  # PRIMARY
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
result = [p.detach().clone() for p in model.parameters()]
