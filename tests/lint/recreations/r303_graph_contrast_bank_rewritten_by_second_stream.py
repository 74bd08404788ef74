"""SkeletonGCL adds a graph contrastive loss (`InfoNCEGraph`) to a skeleton
action-recognition network: the loss module keeps a memory bank of
normalised graph features, writes the batch's features into it
(`self.Bank[input_index] = f_normed.detach()`) and scores the batch against
the whole bank with `einsum('n c, m c -> n m', f_normed, self.Bank)`.  The
einsum keeps the bank for backward.  When the same loss module scores two
graphs of one step (here the joint and the bone stream), the second call
writes the bank again before the single `loss.backward()`, and the first
einsum's saved bank is stale ("one of the variables needed for gradient
computation has been modified by an inplace operation").  The user's fix
detached `f_normed` inside the einsum, which stops the gradient it was meant
to give; the sound fix scores against `self.Bank.clone()`.
Buggy line: `self.Bank[input_index] = f_normed.detach()` in
`InfoNCEGraph.forward`, run twice before the backward pass.
Expected finding: ADL001 there.
Source: https://github.com/OliverHxh/SkeletonGCL/issues/6"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import einsum


class InfoNCEGraph(nn.Module):
    def __init__(self, in_channels=6, out_channels=4, mem_size=8, T=0.8):
        super().__init__()
        self.trans = nn.Linear(in_channels, out_channels)
        self.Bank = nn.Parameter(torch.zeros(mem_size, out_channels), requires_grad=False)
        self.T = T

    def forward(self, f, label, input_index):
        f = self.trans(f)
        f_norm = f.norm(dim=-1, p=2, keepdim=True)
        f_normed = f / f_norm
        self.Bank[input_index] = f_normed.detach()  # missed: ADL001
        all_pairs = einsum("n c, m c -> n m", f_normed, self.Bank)
        return F.cross_entropy(all_pairs / self.T, input_index)


class TwoStreamGCN(nn.Module):
    def __init__(self, num_class=3):
        super().__init__()
        self.joint = nn.Sequential(nn.Linear(5, 6), nn.ReLU())
        self.bone = nn.Sequential(nn.Linear(5, 6), nn.ReLU())
        self.fc = nn.Linear(12, num_class)

    def forward(self, joints, bones):
        g_joint, g_bone = self.joint(joints), self.bone(bones)
        return self.fc(torch.cat([g_joint, g_bone], dim=-1)), g_joint, g_bone


def train_step(model, graph_loss, optimizer, joints, bones, label, index):
    logits, g_joint, g_bone = model(joints, bones)
    loss = F.cross_entropy(logits, label)
    loss = loss + graph_loss(g_joint, label, index) + graph_loss(g_bone, label, index)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


def run():
    torch.manual_seed(0)
    model, graph_loss = TwoStreamGCN(), InfoNCEGraph()
    optimizer = torch.optim.SGD(list(model.parameters()) + list(graph_loss.parameters()), lr=0.1)
    joints, bones = torch.randn(4, 5), torch.randn(4, 5)
    train_step(model, graph_loss, optimizer, joints, bones, torch.tensor([0, 1, 2, 0]), torch.arange(4))
