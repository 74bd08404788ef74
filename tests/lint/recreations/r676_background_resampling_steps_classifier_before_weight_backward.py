"""Background resampling for out-of-distribution detection (JerryYLi/bg-resample-ood),
issue 1: training with resampled background data fails in `train_epoch_resample` with "one of
the variables needed for gradient computation has been modified by an inplace operation:
[torch.cuda.FloatTensor [512, 10]], which is output 0 of TBackward, is at version 2; expected
version 1".  Per batch, the classifier's loss (cross-entropy on the in-distribution half plus
the weighted OOD loss on the background half) is backpropagated with `retain_graph=True` and
`optimizer.step()` updates the classifier; then the resampling weights' loss `loss_w =
-loss_ood`, built from the same forward, is backpropagated through the classifier's last layer
(the transposed `[512, 10]` weight of its `Linear(512, 10)`) that the step has just changed.
The reporter's fix: both backwards before both steps.
Re-created with the trainer's function, the softplus resampling weights and an OOD loss of the
weighted uniform-label cross-entropy; a small trunk in place of the wide ResNet.
Buggy line: `optimizer.step()` before `loss_w.backward()`.
Source: https://github.com/JerryYLi/bg-resample-ood/issues/1"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Classifier(nn.Module):
    def __init__(self, dim=12, feat=16, classes=10):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(dim, feat), nn.ReLU())
        self.fc = nn.Linear(feat, classes)

    def forward(self, x):
        return self.fc(self.trunk(x))


def uniform_loss(outputs, weights):
    """OOD loss: cross-entropy to the uniform label, weighted per background sample."""
    per_sample = -F.log_softmax(outputs, dim=1).mean(1)
    return (weights * per_sample).mean()


def train_epoch_resample(loader1, loader2, weight_params, model, loss2, optimizer, optimizer_w):
    model.eval()
    for inputs, targets in loader1:
        N = inputs.size(0)
        indices, inputs2 = next(loader2)
        inputs = torch.cat((inputs, inputs2), 0)

        # resampling weights
        w = F.softplus(weight_params)
        scale = (w ** .5).mean() / (w.mean() ** .5)
        weights = scale * (w[indices] / w.mean()) ** .5

        # forward
        outputs = model(inputs)
        loss = F.cross_entropy(outputs[:N], targets)
        loss_ood = loss2(outputs[N:], weights)
        loss += loss_ood
        loss_w = -loss_ood

        # backward
        optimizer.zero_grad()
        loss.backward(retain_graph=True)
        optimizer.step()  # expect: ADL003
        optimizer_w.zero_grad()
        loss_w.backward()
        optimizer_w.step()
    return loss.item(), loss_w.item()


def background_batches(pool, batch):
    while True:
        indices = torch.randint(0, pool.size(0), (batch,))
        yield indices, pool[indices]


def run():
    torch.manual_seed(0)
    model = Classifier()
    pool = torch.randn(32, 12)
    weight_params = torch.zeros(32, requires_grad=True)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    optimizer_w = torch.optim.Adam([weight_params], lr=1e-2)
    loader1 = [(torch.randn(8, 12), torch.randint(0, 10, (8,))) for _ in range(2)]
    return train_epoch_resample(loader1, background_batches(pool, 8), weight_params, model,
                                uniform_loss, optimizer, optimizer_w)


if __name__ == "__main__":
    run()
