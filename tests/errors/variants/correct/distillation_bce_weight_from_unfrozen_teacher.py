import torch
from torch import nn

torch.manual_seed(0)
teacher = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
student = nn.Linear(4, 3)
optimizer = torch.optim.SGD(student.parameters(), lr=0.1)
x = torch.randn(6, 4)
hard_labels = (torch.randn(6, 3) > 0).float()
losses = []
for _ in range(2):
    teacher_probabilities = torch.sigmoid(teacher(x))
    confidence = (2 * teacher_probabilities - 1).abs()
    criterion = nn.BCELoss(weight=confidence.detach())  # PRIMARY
    optimizer.zero_grad()
    loss = criterion(torch.sigmoid(student(x)), hard_labels)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
