# message: Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at the moment.
# code: AD303 (catalogue: deepcopy_non_leaf)
# set: 28
# trigger: semi-supervised mean-teacher training: a dashboard helper in another file registers forward
#   hooks that keep every Linear layer's last output on the layer (module.last_output = output); after
#   a first supervised step the trainer makes the teacher with copy.deepcopy(student), which copies the
#   hooked layers' outputs, still in the step's graph
# source: none found; the pattern as users write it (activation-keeping hooks next to an EMA/mean teacher)
# helpers: lib_attention_maps28.py
# results: losses, student, teacher_weights
import copy
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lib_attention_maps28 import watch_outputs  # noqa: E402

torch.manual_seed(0)
student = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
watch_outputs(student, nn.Linear)
optimizer = torch.optim.SGD(student.parameters(), lr=0.1)
losses = []
teacher = None
for step in range(3):
    x, labels = torch.randn(8, 3), torch.randint(0, 2, (8,))
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(student(x), labels)
    if teacher is not None:
        with torch.no_grad():
            target = teacher(x).softmax(1)
        loss = loss + (student(x).softmax(1) - target).pow(2).mean()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
    if teacher is None:
        teacher = copy.deepcopy(student)
        teacher.requires_grad_(False)
    else:
        with torch.no_grad():
            for t, s in zip(teacher.parameters(), student.parameters()):
                t.mul_(0.9).add_(s, alpha=0.1)
teacher_weights = [p.clone() for p in teacher.parameters()]
