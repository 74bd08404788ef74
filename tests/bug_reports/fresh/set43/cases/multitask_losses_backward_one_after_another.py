"""A two-task network (a shared trunk, a classification head and a regression head) whose two
losses are back-propagated one after the other before one optimizer step, `loss1.backward()` then
`loss2.backward()`: both graphs share the trunk, whose saved values the first backward() frees,
and the second fails with "Trying to backward through the graph a second time". The page's fix:
`loss1.backward(retain_graph=True)`, then `loss2.backward()` and the step (the gradients of the
two losses add up in the trunk).
Source: https://errorcanon.top/errors/pytorch/strided-gradient-issue/zh.md
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MultiTaskNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 16), nn.ReLU())
        self.class_head = nn.Linear(16, 4)
        self.value_head = nn.Linear(16, 1)

    def forward(self, x):
        shared = self.trunk(x)
        return self.class_head(shared), self.value_head(shared)


model = MultiTaskNet()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
x = torch.randn(48, 10)
labels = torch.randint(0, 4, (48,))
values = torch.randn(48, 1)

history = []
for epoch in range(5):
    optimizer.zero_grad()
    logits, predicted_values = model(x)
    loss1 = F.cross_entropy(logits, labels)
    loss2 = F.mse_loss(predicted_values, values)
    loss1.backward()
    loss2.backward()
    optimizer.step()
    history.append([loss1.item(), loss2.item()])

result = {"history": torch.tensor(history), "params": [p.detach().clone() for p in model.parameters()]}
