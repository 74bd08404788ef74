"""`torch.tensor([cos_a, cos_b])` copies the values and drops their graph.
Source: https://discuss.pytorch.org/t/gradient-is-lost-when-use-torch-tensor-t1-t2/23261"""
import torch


def run():
    a = torch.tensor(0.0, requires_grad=True)
    b = torch.tensor(0.0, requires_grad=True)
    cos_a = torch.cos(a)
    cos_b = torch.cos(b)
    y2 = torch.tensor([cos_a, cos_b])  # expect: ADL009
    y2.sum().backward()
