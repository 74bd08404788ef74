"""Semi-supervised "mean teacher": the consistency term should pull the student's predictions
on unlabelled data towards the teacher's (an exponential moving average of the student). It is
written with the teacher's probabilities on both sides, so it is always zero and the unlabelled
data trains nothing (no error; the supervised term still trains the student)."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
student = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
teacher = copy.deepcopy(student).requires_grad_(False)
optimizer = torch.optim.SGD(student.parameters(), lr=0.5)
labelled, labels = torch.randn(8, 4), torch.randint(0, 3, (8,))
unlabelled = torch.randn(32, 4)
for step in range(4):
    student_probs = torch.softmax(student(unlabelled), dim=1)
    teacher_probs = torch.softmax(teacher(unlabelled), dim=1)
    consistency = F.mse_loss(teacher_probs, teacher_probs)  # PRIMARY
    loss = F.cross_entropy(student(labelled), labels) + 2.0 * consistency
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    with torch.no_grad():
        for t, s in zip(teacher.parameters(), student.parameters()):
            t.mul_(0.9).add_(0.1 * s)
result = [p.detach().clone() for p in student.parameters()]
