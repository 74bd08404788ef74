"""Semi-supervised facial expression recognition (hangyu94/Ada-CM, main.py): the loss is the labelled
cross entropy plus a supervised contrastive (SupCon) term on two augmented views of the unlabelled
faces, with their pseudo-labels. The projected features of the two views, `feature_u` and
`feature_u2`, are computed inside `with torch.no_grad():`, so the contrastive term is a constant:
it adds to the loss value and trains nothing, the network learns from the cross entropy alone.
Nothing fails.
Source: https://github.com/hangyu94/Ada-CM/issues/8 ("SupCon without gradient for optimizing model";
the correct version computes the features with gradients, as the original SupContrast code does).
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

NUM_CLASSES, TEMPERATURE, LAMBDA_CON = 3, 0.5, 0.5


class ExpressionNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(2), nn.Flatten())
        self.classifier = nn.Linear(32, NUM_CLASSES)
        self.projector = nn.Sequential(nn.Linear(32, 16), nn.ReLU(), nn.Linear(16, 8))

    def forward(self, x):
        features = self.backbone(x)
        return self.classifier(features), F.normalize(self.projector(features), dim=1)


def supcon_loss(features, labels):
    """features: [n, views, dim]; positives are the samples with the same (pseudo) label."""
    n, views, _ = features.shape
    flat = features.transpose(0, 1).reshape(n * views, -1)
    labels = labels.repeat(views)
    logits = flat @ flat.t() / TEMPERATURE
    self_mask = torch.eye(n * views, dtype=torch.bool)
    logits = logits.masked_fill(self_mask, -1e9)
    positives = (labels[:, None] == labels[None, :]) & ~self_mask
    log_prob = logits - logits.logsumexp(dim=1, keepdim=True)
    return -(log_prob * positives).sum(1).div(positives.sum(1).clamp(min=1)).mean()


model = ExpressionNet()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

losses = []
for step in range(4):
    faces, labels = torch.randn(6, 1, 8, 8), torch.randint(0, NUM_CLASSES, (6,))
    unlabelled = torch.randn(6, 1, 8, 8)
    view1 = unlabelled + 0.1 * torch.randn_like(unlabelled)
    view2 = unlabelled.flip(-1)

    logits, _ = model(faces)
    ce = F.cross_entropy(logits, labels)
    with torch.no_grad():
        logits_u, feature_u = model(view1)
        _, feature_u2 = model(view2)
    pseudo_labels = logits_u.argmax(dim=1)
    con = supcon_loss(torch.stack([feature_u, feature_u2], dim=1), pseudo_labels)
    loss = ce + LAMBDA_CON * con
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
