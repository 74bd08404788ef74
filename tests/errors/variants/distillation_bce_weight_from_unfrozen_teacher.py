# message: The function 'binary_cross_entropy' is not differentiable with respect to argument 'weight'.
#   This input cannot have requires_grad True.
# code: AD140 (catalogue: non_differentiable_weight)
# set: 6
# trigger: multi-label distillation weighs each label by the teacher's confidence with
#   nn.BCELoss(weight=...) built each step; the teacher was never frozen (only the student is given
#   to the optimizer), so the weight requires grad
# source: none found; the pattern as users write it
# results: losses, student
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
    criterion = nn.BCELoss(weight=confidence)  # PRIMARY
    optimizer.zero_grad()
    loss = criterion(torch.sigmoid(student(x)), hard_labels)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
