# message: unsupported operation: some elements of the input tensor and the written-to tensor refer to
#   a single memory location. Please clone() the tensor before performing the operation.
# code: AD203 (catalogue: overlap_inplace)
# set: 15
# trigger: a motion model turns the per-frame features of one clip (time, features) into temporal
#   differences in place, feats[1:] -= feats[:-1], inside its forward (the two slices overlap)
# source: none found; the pattern as users write it (NumPy's np.diff written by hand)
# results: model.proj.weight.grad, outs
import torch
from torch import nn


class MotionNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(2, 3)

    def forward(self, clip):
        feats = torch.relu(self.proj(clip))
        feats = torch.cat([feats[:1], feats[1:] - feats[:-1]])  # PRIMARY
        return feats


torch.manual_seed(0)
model = MotionNet()
outs = [model(torch.randn(5, 2)) for _ in range(2)]
sum(o.pow(2).sum() for o in outs).backward()
