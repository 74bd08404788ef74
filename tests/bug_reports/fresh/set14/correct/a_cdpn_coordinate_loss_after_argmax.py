"""Training script for CDPN 6D pose estimation (LZGMatrix/BOP19_CDPN_2019ICCV), written by a user
from the repository's test.py: the network predicts, for every pixel, a distribution over
`coor_bin` bins for each of the object's x, y and z coordinates. The user took the test-time
decoding, `torch.argmax` over the bins, turned the bin indices back into coordinates in [-1, 1],
and computed an L1 loss on them. argmax is not differentiable, so the loss has no graph and
`loss.backward()` raises "element 0 of tensors does not require grad and does not have a
grad_fn", although every parameter of the model requires grad.
Source: https://github.com/LZGMatrix/BOP19_CDPN_2019ICCV/issues/4 (answer: "torch.argmax() is
nondifferentiable, so you need to take the loss before torch.argmax()", i.e. a classification loss
on the bin scores).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

BINS, SIZE, BATCH = 8, 6, 2


class CoordinateHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
        # One score per bin and axis, plus a background bin (index BINS) per axis.
        self.coor = nn.Conv2d(8, 3 * (BINS + 1), 1)

    def forward(self, image):
        return self.coor(self.backbone(image)).split(BINS + 1, dim=1)


model = CoordinateHead()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
images = torch.randn(BATCH, 3, SIZE, SIZE)
mask = (torch.rand(BATCH, 1, SIZE, SIZE) > 0.4).float()
target_coor = (torch.rand(BATCH, 3, SIZE, SIZE) * 2 - 1) * mask
# The bin of each target coordinate; background pixels are in the background bin.
target_bins = ((target_coor + 1) / 2 * (BINS - 1)).round().long()
target_bins[(mask == 0).expand_as(target_bins)] = BINS

losses = []
for step in range(3):
    optimizer.zero_grad()
    output_coor_x_, output_coor_y_, output_coor_z_ = model(images)
    # The loss is taken on the bin scores, before any argmax.
    loss = (F.cross_entropy(output_coor_x_, target_bins[:, 0])
            + F.cross_entropy(output_coor_y_, target_bins[:, 1])
            + F.cross_entropy(output_coor_z_, target_bins[:, 2]))
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
