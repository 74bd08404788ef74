"""Learning-Texture-Invariant-Representation trains a segmentation network
with an output-level adversarial loss (AdaptSegNet style).  Each iteration
backpropagates the source segmentation loss and calls `optimizer.step()`,
and only then computes the adversarial loss on the target images and
backpropagates it into the segmentation network.  The next iteration starts
with `optimizer.zero_grad()`: the adversarial gradients are cleared before
any step applies them, so the adversarial loss never trains the network.
Nothing raises.  The fix backpropagates `loss_adv` before the step.
Buggy line: `loss_adv.backward()` after `optimizer.step()` in `main`.
Source: https://github.com/MyeongJin-Kim/Learning-Texture-Invariant-Representation/issues/10"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SegNet(nn.Module):
    def __init__(self, num_classes=3):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, num_classes, 1))

    def forward(self, x):
        return self.body(x)


class FCDiscriminator(nn.Module):
    def __init__(self, num_classes=3):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(num_classes, 4, 3, padding=1), nn.LeakyReLU(0.2), nn.Conv2d(4, 1, 1))

    def forward(self, x):
        return self.net(x)


def main(num_steps=2, lambda_adv=0.01, batches=None):
    model = SegNet()
    model_D = FCDiscriminator()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    optimizer_D = torch.optim.Adam(model_D.parameters(), lr=1e-4)
    bce_loss = nn.BCEWithLogitsLoss()
    source_label, target_label = 0.0, 1.0
    for i_iter in range(num_steps):
        image_source, label, image_target = batches[i_iter]
        optimizer.zero_grad()
        optimizer_D.zero_grad()

        for param in model_D.parameters():
            param.requires_grad = False
        pred_source = model(image_source)
        loss_seg_source = F.cross_entropy(pred_source, label)
        loss_seg_source.backward()
        optimizer.step()

        pred_target = model(image_target)
        D_output_target = model_D(F.softmax(pred_target, dim=1))
        loss_adv = bce_loss(D_output_target, torch.full_like(D_output_target, source_label))
        loss_adv = loss_adv * lambda_adv
        loss_adv.backward()  # missed: no rule (gradients cleared before a step)

        for param in model_D.parameters():
            param.requires_grad = True
        D_out_s = model_D(F.softmax(pred_source.detach(), dim=1))
        D_out_t = model_D(F.softmax(pred_target.detach(), dim=1))
        loss_D = (bce_loss(D_out_s, torch.full_like(D_out_s, source_label))
                  + bce_loss(D_out_t, torch.full_like(D_out_t, target_label))) / 2
        loss_D.backward()
        optimizer_D.step()
    return model


def bug_shows():
    """The segmentation network ends where training on the segmentation loss
    alone puts it: the adversarial loss changed nothing."""
    torch.manual_seed(0)
    batches = [(torch.randn(2, 3, 6, 6), torch.randint(0, 3, (2, 6, 6)), torch.randn(2, 3, 6, 6)) for _ in range(2)]
    torch.manual_seed(1)
    trained = main(batches=batches)
    torch.manual_seed(1)
    seg_only = SegNet()
    opt = torch.optim.SGD(seg_only.parameters(), lr=0.01)
    for image_source, label, _ in batches:
        opt.zero_grad()
        F.cross_entropy(seg_only(image_source), label).backward()
        opt.step()
    return all(torch.allclose(a, b) for a, b in zip(trained.parameters(), seg_only.parameters()))
