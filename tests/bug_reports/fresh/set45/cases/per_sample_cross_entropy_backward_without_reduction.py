"""A classifier trained with a loss built as `nn.CrossEntropyLoss(reduction='none')`: the loss is a
vector with one entry per sample, and `loss.backward()` fails with "grad can be implicitly created
only for scalar outputs". The post's first change: reduce it to a scalar before the backward pass,
`loss.sum().backward()` (equivalently `loss.backward(torch.ones_like(loss))`).
Source: https://blog.csdn.net/cyj972628089/article/details/122732509
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)

net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
loss = nn.CrossEntropyLoss(reduction='none')
trainer = torch.optim.SGD(net.parameters(), lr=0.01)
features = torch.randn(40, 8)
labels = torch.randint(0, 3, (40,))

history = []
for epoch in range(10):
    for start in range(0, 40, 10):
        X, y = features[start:start + 10], labels[start:start + 10]
        l = loss(net(X), y)
        trainer.zero_grad()
        l.backward()
        trainer.step()
    history.append(loss(net(features), labels).mean().item())

result = {"history": torch.tensor(history), "params": [p.detach().clone() for p in net.parameters()]}
