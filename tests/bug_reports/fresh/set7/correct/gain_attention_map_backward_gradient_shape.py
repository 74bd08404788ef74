"""Guided attention (GAIN): the class score is backpropagated to the last feature maps to build a
Grad-CAM attention map; the masked logits were summed to a scalar before a (batch, classes)
`gradient=` was passed.
Source: https://github.com/ngxbac/GAIN/issues/2 (`grad_logits = logits * labels_ohe` without the
`.sum()`)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
N_CLASSES = 2


class GAIN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
        self.classifier = nn.Linear(8, N_CLASSES)

    def forward(self, images, labels):
        feature_maps = self.features(images)
        feature_maps.retain_grad()
        logits = self.classifier(feature_maps.mean((2, 3)))
        labels_ohe = F.one_hot(labels, N_CLASSES).float()
        gradient = logits * labels_ohe
        grad_logits = logits * labels_ohe
        grad_logits.backward(gradient=gradient, retain_graph=True)
        weights = feature_maps.grad.mean((2, 3), keepdim=True)
        attention = F.relu((weights * feature_maps).sum(1, keepdim=True))
        return logits, attention


model = GAIN()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
images, labels = torch.randn(10, 3, 8, 8), torch.randint(0, N_CLASSES, (10,))
losses = []
for step in range(2):
    logits, attention = model(images, labels)
    masked = images * (1 - torch.sigmoid(attention - attention.mean()))
    masked_score = F.softmax(model.classifier(model.features(masked).mean((2, 3))), -1)
    loss = F.cross_entropy(logits, labels) + masked_score.gather(1, labels[:, None]).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
