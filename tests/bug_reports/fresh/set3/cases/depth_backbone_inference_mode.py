"""A depth-estimation model whose frozen backbone's forward is decorated with
`@torch.inference_mode()`: its features are inference tensors, and the trainable head cannot save
them for backward.
Source: https://github.com/facebookresearch/dinov2/issues/472 (answer: removing the decorator makes
training work).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, 8, 4, stride=4)

    @torch.inference_mode()
    def forward(self, images):
        return torch.relu(self.patch_embed(images))


class Depther(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = Backbone().requires_grad_(False)
        self.head = nn.Conv2d(8, 1, 3, padding=1)

    def forward_train(self, images, depth_gt):
        depth = self.head(self.backbone(images))
        return (depth - depth_gt).abs().mean()


model = Depther()
optimizer = torch.optim.SGD(model.head.parameters(), lr=0.1)
images, depth_gt = torch.randn(2, 3, 16, 16), torch.rand(2, 1, 4, 4)
loss = model.forward_train(images, depth_gt)
optimizer.zero_grad()
loss.backward()
optimizer.step()
result = {"loss": loss.detach(), "params": [p.detach() for p in model.head.parameters()]}
