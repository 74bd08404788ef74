"""Dynamic pruning with feedback (DPF): every few steps a magnitude mask is recomputed from the
dense weights, the forward uses the masked weights, and the gradient of the masked model is
applied to the dense weights, so that a pruned weight keeps being updated and can come back
when the mask is recomputed. The layers apply the mask by writing it into the parameter,
`self.fc1.weight.data = torch.mul(self.fc1.weight, self.mask1)`, before the matmul: the dense
weights are overwritten with their pruned copy on every forward, the pruned entries are reset
to zero each step, nothing accumulates on them, and the pruning can never be revised. No error;
the model trains to different weights.
Source: https://github.com/INCHEON-CHO/Dynamic_Model_Pruning_with_Feedback/issues/1 ("Should the
weights be masked at forward()?": the weights are masked at every forward with
`self.conv1.weight.data = torch.mul(self.conv1.weight, self.mask1.weight)`, which the paper's
algorithm does not do; the author agrees and replaces the line by an autograd Function that
keeps the dense weights).
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

SPARSITY, REMASK_EVERY = 0.6, 4


def magnitude_mask(weight):
    threshold = weight.abs().flatten().kthvalue(int(SPARSITY * weight.numel())).values
    return (weight.abs() > threshold).float()


class PrunedMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 3)
        self.register_buffer("mask1", torch.ones_like(self.fc1.weight))
        self.register_buffer("mask2", torch.ones_like(self.fc2.weight))

    def remask(self):
        self.mask1.copy_(magnitude_mask(self.fc1.weight.detach()))
        self.mask2.copy_(magnitude_mask(self.fc2.weight.detach()))

    def forward(self, x):
        self.fc1.weight.data = torch.mul(self.fc1.weight, self.mask1)
        x = F.relu(self.fc1(x))
        self.fc2.weight.data = torch.mul(self.fc2.weight, self.mask2)
        return self.fc2(x)


model = PrunedMLP()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
inputs, labels = torch.randn(64, 16), torch.randint(0, 3, (64,))
losses = []
for step in range(12):
    if step % REMASK_EVERY == 0:
        model.remask()
    loss = F.cross_entropy(model(inputs), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()],
          "masks": [model.mask1.clone(), model.mask2.clone()]}
