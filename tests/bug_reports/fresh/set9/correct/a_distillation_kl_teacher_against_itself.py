"""Knowledge distillation of a small image classifier from a large one (labml_nn's
distillation/__init__.py): the KL-divergence term is computed between the teacher's softened
log-probabilities and ... the teacher's again (`large_logits` written twice where the first one
should be the student's `output`). The teacher runs under `torch.no_grad()`, so the term is a
constant zero: the student is trained on the hard labels alone and the distillation does nothing
(no error; `loss.backward()` runs through the NLL term).
Source: https://github.com/labmlai/annotated_deep_learning_paper_implementations/issues/66 ("Small
error in distillation code": "I think you mean to use `output` rather than using `large_logits`
again here"; the maintainer: "It's not a small bug, it just completely stops doing the
distillation", fixed in commit e0d4b65).
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

large = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                      nn.Flatten(), nn.Linear(16, 10))
small = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                      nn.Flatten(), nn.Linear(4, 10))
optimizer = torch.optim.Adam(small.parameters(), lr=2.5e-3)
kl_div_loss = nn.KLDivLoss(reduction="batchmean", log_target=True)
loss_func = nn.CrossEntropyLoss()
kl_div_loss_weight, nll_loss_weight, temperature = 16 * 5, 0.5, 5

large.eval()
small.train()
losses = []
for step in range(5):
    data = torch.randn(8, 3, 8, 8)
    target = torch.randint(0, 10, (8,))
    with torch.no_grad():
        large_logits = large(data)
    output = small(data)
    kl = kl_div_loss(F.log_softmax(output / temperature, dim=-1),
                     F.log_softmax(large_logits / temperature, dim=-1))
    nll_loss = loss_func(output, target)
    loss = kl_div_loss_weight * kl + nll_loss_weight * nll_loss
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in small.parameters()]}
