"""Unsupervised domain adaptation with VADA (ozanciga/dirt-t, `vada_train.py`): each iteration
computes the features of a source and a target batch, the discriminator's loss (on detached
features) and the main loss (source classification, plus a domain-confusion term that runs the
features through the discriminator, plus the target's conditional entropy). The discriminator is
updated first, then the main loss's backward() runs: it goes back through the discriminator,
whose weights the discriminator's optimizer.step() has just changed in place ("... [torch.FloatTensor
[100, 1]], which is output 0 of TBackward, is at version 2; expected version 1 instead"). The fix
given on the issue moves the discriminator's update before the main loss is computed.
Source: https://github.com/ozanciga/dirt-t/issues/3 ("RuntimeError: one of the variables needed for
gradient computation has been modified by an inplace operation").
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

IN, FEAT, CLASSES, BATCH = 10, 16, 4, 8

features = nn.Sequential(nn.Linear(IN, FEAT), nn.ReLU())
classifier = nn.Linear(FEAT, CLASSES)
discriminator = nn.Sequential(nn.Linear(FEAT, 12), nn.ReLU(), nn.Linear(12, 1))
optimizer = torch.optim.Adam(list(features.parameters()) + list(classifier.parameters()), lr=1e-3)
optimizer_disc = torch.optim.Adam(discriminator.parameters(), lr=1e-3)

x_src, y_src = torch.randn(BATCH, IN), torch.randint(0, CLASSES, (BATCH,))
x_tgt = torch.randn(BATCH, IN) + 0.5
ones, zeros = torch.ones(BATCH, 1), torch.zeros(BATCH, 1)

losses = []
for it in range(3):
    f_src, f_tgt = features(x_src), features(x_tgt)
    logits_src, logits_tgt = classifier(f_src), classifier(f_tgt)

    loss_disc = F.binary_cross_entropy_with_logits(discriminator(f_src.detach()), ones) + \
        F.binary_cross_entropy_with_logits(discriminator(f_tgt.detach()), zeros)
    optimizer_disc.zero_grad()
    loss_disc.backward()
    optimizer_disc.step()

    confusion = 0.5 * (F.binary_cross_entropy_with_logits(discriminator(f_src), zeros)
                       + F.binary_cross_entropy_with_logits(discriminator(f_tgt), ones))
    p_tgt = F.softmax(logits_tgt, dim=1)
    conditional_entropy = -(p_tgt * F.log_softmax(logits_tgt, dim=1)).sum(1).mean()
    loss_main = F.cross_entropy(logits_src, y_src) + 1e-2 * confusion + 1e-2 * conditional_entropy

    optimizer.zero_grad()
    loss_main.backward()
    optimizer.step()
    losses.append(torch.stack([loss_disc.detach(), loss_main.detach()]))

result = {"losses": torch.stack(losses),
          "params": [p.detach().clone() for p in list(features.parameters()) + list(classifier.parameters())
                     + list(discriminator.parameters())]}
