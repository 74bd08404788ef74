"""`model.requires_grad_ = False` replaces the module's method with `False`
instead of calling it: nothing is frozen, and a loss through the "frozen"
model still sends gradients into it (found on the sixth held-out check;
silent, no error is raised).
Source: https://github.com/ming024/FastSpeech2/blob/d4e79eb52e8b/utils/model.py#L31-L34"""
import torch
import torch.nn as nn


def load_frozen(device="cpu"):
    model = nn.Linear(3, 3).to(device)
    model.eval()
    model.requires_grad_ = False  # expect: ADL016
    return model


def bug_shows() -> bool:
    """The teacher meant to be frozen gets a gradient from the student's loss."""
    teacher = load_frozen()
    student = nn.Linear(3, 3)
    x = torch.randn(4, 3)
    (student(x) - teacher(x)).pow(2).sum().backward()
    return teacher.weight.requires_grad and teacher.weight.grad is not None
