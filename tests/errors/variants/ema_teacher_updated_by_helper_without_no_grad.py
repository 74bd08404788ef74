# message: a leaf Variable that requires grad is being used in an in-place operation.
# code: AD102 (catalogue: leaf_inplace_method)
# set: 9
# helpers: lib_ema.py
# trigger: a mean-teacher setup: the teacher is a deep copy of the student (its parameters still
#   require grad) and a helper in another file moves it towards the student with mul_/add_ after
#   every step, with gradients on
# source: none found; the pattern as users write it (EMA teachers of mean-teacher / BYOL training)
# results: losses, student, teacher
import copy
import os
import sys

import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_ema import update_teacher  # noqa: E402

torch.manual_seed(0)
student = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
teacher = copy.deepcopy(student)
optimizer = torch.optim.SGD(student.parameters(), lr=0.1)
x = torch.randn(6, 3)
losses = []
for _ in range(3):
    optimizer.zero_grad()
    with torch.no_grad():
        target = teacher(x).softmax(-1)
    loss = F.cross_entropy(student(x), target)
    loss.backward()
    optimizer.step()
    update_teacher(teacher, student, decay=0.9)
    losses.append(loss.item())
