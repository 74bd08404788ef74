"""Correct near twins: the leaf kept under its own name and the squashed value
under another; `torch.as_tensor` of the leaf (the leaf itself); a clamp of a
detached copy made a new leaf.  `run()` returns the gradients, compared in the
test with the hand-written ones."""
import torch


def squash_kept(target):
    raw = torch.zeros(3, requires_grad=True)
    gate = torch.sigmoid(raw)
    loss = ((gate - target) ** 2).sum()
    loss.backward()
    return raw.grad


def as_tensor_same(target):
    w = torch.zeros(3, requires_grad=True)
    w = torch.as_tensor(w)
    loss = ((w - target) ** 2).sum()
    loss.backward()
    return w.grad


def new_leaf(target):
    w = torch.rand(3)
    w = torch.clamp(w.detach(), 0, 1).requires_grad_()
    loss = ((w - target) ** 2).sum()
    loss.backward()
    return w.grad


def run():
    target = torch.tensor([0.2, 0.9, 0.5])
    return squash_kept(target), as_tensor_same(target), new_leaf(target)
