# message: you can only change requires_grad flags of leaf variables. If you want to use a computed variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().
# code: AD115 (catalogue: requires_grad_non_leaf)
# set: 4
# trigger: knowledge distillation: the teacher's soft targets are "frozen" with
#   targets.requires_grad = False inside a Trainer's step
# source: none found; the pattern as users write it
# results: losses, student
import torch
from torch import nn
import torch.nn.functional as F


class Distiller:
    def __init__(self, teacher, student):
        self.teacher, self.student = teacher, student
        self.optimizer = torch.optim.SGD(student.parameters(), lr=0.5)

    def step(self, x):
        targets = F.softmax(self.teacher(x) / 2.0, dim=-1)
        targets = targets.detach()  # PRIMARY
        self.optimizer.zero_grad()
        loss = F.kl_div(F.log_softmax(self.student(x) / 2.0, dim=-1), targets, reduction="batchmean")
        loss.backward()
        self.optimizer.step()
        return loss.item()


torch.manual_seed(0)
teacher, student = nn.Linear(4, 3), nn.Linear(4, 3)
distiller = Distiller(teacher, student)
x = torch.randn(8, 4)
losses = [distiller.step(x) for _ in range(2)]
