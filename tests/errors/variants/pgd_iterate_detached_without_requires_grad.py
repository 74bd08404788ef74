# message: One of the differentiated Tensors does not require grad
# code: AD306 (catalogue: grad_input_no_grad)
# set: 14
# trigger: a PGD attack class: the perturbed batch starts as x.clone().requires_grad_(), and each
#   step projects it and detaches it (x_adv = ....detach()) without asking for gradients again, so
#   the second step's torch.autograd.grad(loss, x_adv) has an input outside the graph
# source: none found; the pattern as users write it (PGD loops as in adversarial-training code)
# results: adversarial, losses
import torch
import torch.nn.functional as F
from torch import nn


class PGD:
    def __init__(self, model, eps=0.3, alpha=0.1, steps=3):
        self.model, self.eps, self.alpha, self.steps = model, eps, alpha, steps

    def perturb(self, x, labels):
        x_adv = x.clone().requires_grad_()
        for _ in range(self.steps):
            loss = F.cross_entropy(self.model(x_adv), labels)
            (gradient,) = torch.autograd.grad(loss, x_adv)
            x_adv = x_adv + self.alpha * gradient.sign()
            x_adv = (x + (x_adv - x).clamp(-self.eps, self.eps)).detach()  # PRIMARY
        return x_adv


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
attack = PGD(model)
x, labels = torch.randn(6, 4), torch.tensor([0, 1, 2, 0, 1, 2])
losses = []
for _ in range(2):
    adversarial = attack.perturb(x, labels)
    optimizer.zero_grad()
    loss = F.cross_entropy(model(adversarial), labels)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
