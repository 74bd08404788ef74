# message: Function 'HypotBackward0' returned nan values in its 0th output.
# code: AD118 (catalogue: anomaly_nan)
# set: 7
# trigger: a pose model's loss compares limb lengths, torch.hypot(dx, dy) of the vector between two
#   predicted keypoints, under torch.autograd.detect_anomaly(); one limb's keypoints coincide
#   (dx = dy = 0), where hypot's derivative is 0/0
# source: none found; the pattern as users write it (bone-length losses in pose estimation)
# results: losses, model
import torch
from torch import nn


class KeypointHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 4)

    def forward(self, x):
        return self.lin(x).view(-1, 2, 2)


def limb_length(keypoints):
    delta = keypoints[:, 1] - keypoints[:, 0]
    coincide = (delta[:, 0] == 0) & (delta[:, 1] == 0)
    safe_dx = torch.where(coincide, torch.ones_like(delta[:, 0]), delta[:, 0])
    return torch.where(coincide, 0.0, torch.hypot(safe_dx, delta[:, 1]))  # PRIMARY


torch.manual_seed(0)
model = KeypointHead()
with torch.no_grad():
    model.lin.bias[2:].copy_(model.lin.bias[:2])
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, target_lengths = torch.randn(3, 3), torch.tensor([0.5, 0.2, 1.0])
x[0] = 0.0  # a sample where the two keypoints are predicted at the same place
losses = []
with torch.autograd.detect_anomaly():
    for _ in range(2):
        optimizer.zero_grad()
        loss = (limb_length(model(x)) - target_lengths).pow(2).mean()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
