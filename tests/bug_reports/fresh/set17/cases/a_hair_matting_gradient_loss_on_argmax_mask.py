"""Hair segmentation network trained with a cross-entropy plus an image-gradient consistency loss
(wonbeomjang/mobile-hair-segmentation-pytorch, loss/loss.py, ImageGradientLoss): the consistency
term compared the image's edges with the edges of the predicted mask, but the mask was taken as
`pred.argmax(1).float()`, which has no gradient. The term changes the printed loss and trains
nothing; the network learns from the cross-entropy alone. Nothing is raised.
Source: https://github.com/wonbeomjang/mobile-hair-segmentation-pytorch/issues/3 (the argmax is
"not differentiable"; the fix given there: use the hair channel of the prediction, `pred[:, 1]`).
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

BATCH, SIZE, WEIGHT = 2, 12, 0.5
SOBEL_X = torch.tensor([[1.0, 0.0, -1.0], [2.0, 0.0, -2.0], [1.0, 0.0, -1.0]]).view(1, 1, 3, 3)
SOBEL_Y = SOBEL_X.transpose(2, 3)


class TinyHairNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1), nn.ReLU())
        self.classifier = nn.Conv2d(8, 2, 1)

    def forward(self, images):
        return F.softmax(self.classifier(self.body(images)), dim=1)


def image_gradients(x):
    return F.conv2d(x, SOBEL_X, padding=1), F.conv2d(x, SOBEL_Y, padding=1)


def image_gradient_loss(pred, gray):
    size = pred.size()
    pred = pred.argmax(1).view(size[0], 1, size[2], size[3]).float()
    image_x, image_y = image_gradients(gray)
    image_mag = torch.sqrt(image_x ** 2 + image_y ** 2 + 1e-6)
    mask_x, mask_y = image_gradients(pred)
    mask_mag = torch.sqrt(mask_x ** 2 + mask_y ** 2 + 1e-6)
    alignment = 1 - ((image_x * mask_x + image_y * mask_y) / (image_mag * mask_mag)) ** 2
    return (alignment * mask_mag).sum() / (mask_mag.sum() + 1e-6)


model = TinyHairNet()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
images = torch.randn(BATCH, 3, SIZE, SIZE)
gray = images.mean(dim=1, keepdim=True)
masks = (gray > 0).long().squeeze(1)

losses = []
for step in range(4):
    optimizer.zero_grad()
    pred = model(images)
    loss = F.nll_loss(torch.log(pred + 1e-8), masks) + WEIGHT * image_gradient_loss(pred, gray)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
