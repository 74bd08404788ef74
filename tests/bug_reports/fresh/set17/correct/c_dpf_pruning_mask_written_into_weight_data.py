"""The masked weight is computed out of place by an autograd Function whose backward passes the
gradient straight to the dense weight (the author's fix: the dense weights are kept, the
masked model's gradient updates them all).
Source: https://github.com/INCHEON-CHO/Dynamic_Model_Pruning_with_Feedback/issues/1."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

SPARSITY, REMASK_EVERY = 0.6, 4


def magnitude_mask(weight):
    threshold = weight.abs().flatten().kthvalue(int(SPARSITY * weight.numel())).values
    return (weight.abs() > threshold).float()


class MaskWithFeedback(torch.autograd.Function):
    @staticmethod
    def forward(ctx, weight, mask):
        return weight * mask

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output, None


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
        weight1 = MaskWithFeedback.apply(self.fc1.weight, self.mask1)
        x = F.relu(F.linear(x, weight1, self.fc1.bias))
        weight2 = MaskWithFeedback.apply(self.fc2.weight, self.mask2)
        return F.linear(x, weight2, self.fc2.bias)


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
