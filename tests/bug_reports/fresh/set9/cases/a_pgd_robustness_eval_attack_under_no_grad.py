"""Evaluating an image classifier's robustness with a PGD attack (advertorch's
LinfPGDAttack.perturb, which runs `perturb_iterative`): the whole test loop is wrapped in
`torch.no_grad()`, as usual for evaluation, so the attack's forward pass builds no graph and its
`loss.backward()` raises "element 0 of tensors does not require grad and does not have a grad_fn"
two calls below the line that turned gradients off.
Source: https://github.com/BorealisAI/advertorch/issues/79 ("Adversarial training works well but
Attacking the Network throws errors"; the maintainer: "You'll need to use autograd to get gradient
based attack working. So removing `with torch.no_grad()` would probably make it work"; the clean
evaluation may stay under no_grad).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def perturb_iterative(xvar, yvar, predict, nb_iter, eps, eps_iter, loss_fn):
    delta = torch.zeros_like(xvar).uniform_(-eps, eps)
    delta.requires_grad_()
    for _ in range(nb_iter):
        outputs = predict(xvar + delta)
        loss = loss_fn(outputs, yvar)
        loss.backward()
        grad_sign = delta.grad.data.sign()
        delta.data = delta.data + eps_iter * grad_sign
        delta.data = torch.clamp(delta.data, -eps, eps)
        delta.data = torch.clamp(xvar.data + delta.data, 0.0, 1.0) - xvar.data
        delta.grad.data.zero_()
    return torch.clamp(xvar + delta, 0.0, 1.0).detach()


class LinfPGDAttack:
    def __init__(self, predict, eps=0.3, nb_iter=5, eps_iter=0.05):
        self.predict, self.eps, self.nb_iter, self.eps_iter = predict, eps, nb_iter, eps_iter
        self.loss_fn = nn.CrossEntropyLoss(reduction="sum")

    def perturb(self, x, y):
        return perturb_iterative(x, y, self.predict, self.nb_iter, self.eps, self.eps_iter,
                                 self.loss_fn)


net = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                    nn.Linear(8 * 4 * 4, 10))
net.eval()
adversary = LinfPGDAttack(net)
testloader = [(torch.rand(8, 1, 8, 8), torch.randint(0, 10, (8,))) for _ in range(2)]

correct, total, adversarial = 0, 0, []
with torch.no_grad():
    for inputs, targets in testloader:
        adv_untargeted = adversary.perturb(inputs, targets)
        inputs = adv_untargeted
        adversarial.append(adv_untargeted)
        outputs = net(inputs)
        correct += (outputs.argmax(1) == targets).sum().item()
        total += targets.numel()
result = {"robust_accuracy": correct / total, "adversarial": adversarial}
