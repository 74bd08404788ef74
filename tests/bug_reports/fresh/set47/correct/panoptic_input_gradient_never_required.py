"""Looking at the gradient of the training loss with respect to the input image in a panoptic
segmentation trainer (a semantic head and an instance-center head on a shared backbone): after
`loss.backward()` the script reads `data['data'].grad` to build a saliency map, and it is None,
so `.abs()` on it fails with "'NoneType' object has no attribute 'abs'". The image batch comes
from the data loader as a plain tensor that never asked for a gradient, so backward() stops at the
parameters. The change: mark the input as requiring grad before the forward pass
(`data['data'].requires_grad_()`); the parameters' gradients and the training step are unchanged.
Source: https://github.com/uber-research/UPSNet/issues/24
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TinyPanopticNet(nn.Module):
    def __init__(self, num_classes=3):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1), nn.ReLU())
        self.semantic_head = nn.Conv2d(8, num_classes, 1)
        self.center_head = nn.Conv2d(8, 1, 1)

    def forward(self, data, label):
        features = self.backbone(data["data"])
        seg_loss = F.cross_entropy(self.semantic_head(features), label["seg_gt"])
        center_loss = F.mse_loss(torch.sigmoid(self.center_head(features)), label["center_gt"])
        return seg_loss + center_loss


model = TinyPanopticNet()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
saliency_maps = []
for step in range(3):
    data = {"data": torch.randn(2, 3, 16, 16)}
    data["data"].requires_grad_()
    label = {"seg_gt": torch.randint(0, 3, (2, 16, 16)), "center_gt": torch.rand(2, 1, 16, 16)}
    optimizer.zero_grad()
    loss = model(data, label)
    loss.backward()
    saliency_maps.append(data["data"].grad.abs().amax(dim=1))
    optimizer.step()

result = {"saliency": torch.stack(saliency_maps), "weights": [p.detach().clone() for p in model.parameters()]}
