"""Binary segmentation trained with segmentation_models.pytorch's legacy `utils` losses: a
`threshold` argument was added to `DiceLoss` so that the loss uses the same binarised prediction
as the metric, `_threshold(x, threshold)` returning `(x > threshold).type(x.dtype)`. The comparison
has no gradient: the loss no longer depends on the network, and `loss.backward()` raises "element 0
of tensors does not require grad and does not have a grad_fn". (The pull request then wrapped the
mask in `torch.tensor(..., requires_grad=True)`, which runs but trains nothing.)
Source: https://github.com/qubvel-org/segmentation_models.pytorch/pull/611 ("Threshold for Dice loss":
"After doing so, the `_threshold` function in `utils/functional.py` causes the following error
`element 0 of tensors does not require grad and does not have a grad_fn`"); the correct version keeps
the threshold for the IoU metric only, as the library's losses do (`threshold=None`).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)


def _threshold(x, threshold=None):
    if threshold is not None:
        return (x > threshold).type(x.dtype)
    return x


def f_score(pr, gt, beta=1, eps=1e-7, threshold=None):
    pr = _threshold(pr, threshold=threshold)
    tp = torch.sum(gt * pr)
    fp = torch.sum(pr) - tp
    fn = torch.sum(gt) - tp
    return ((1 + beta ** 2) * tp + eps) / ((1 + beta ** 2) * tp + beta ** 2 * fn + fp + eps)


def iou(pr, gt, eps=1e-7, threshold=None):
    pr = _threshold(pr, threshold=threshold)
    intersection = torch.sum(gt * pr)
    return (intersection + eps) / (torch.sum(gt) + torch.sum(pr) - intersection + eps)


class DiceLoss(nn.Module):
    def __init__(self, eps=1.0, beta=1.0, threshold=None):
        super().__init__()
        self.eps, self.beta, self.threshold = eps, beta, threshold
        self.activation = nn.Sigmoid()

    def forward(self, y_pr, y_gt):
        y_pr = self.activation(y_pr)
        return 1 - f_score(y_pr, y_gt, beta=self.beta, eps=self.eps, threshold=self.threshold)


model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 1, 1))
loss_fn = DiceLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

losses, scores = [], []
for step in range(4):
    images = torch.randn(4, 3, 12, 12)
    masks = (torch.rand(4, 1, 12, 12) > 0.5).float()
    logits = model(images)
    loss = loss_fn(logits, masks)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
    scores.append(iou(torch.sigmoid(logits.detach()), masks, threshold=0.5))

result = {"losses": losses, "iou": scores, "params": [p.detach().clone() for p in model.parameters()]}
