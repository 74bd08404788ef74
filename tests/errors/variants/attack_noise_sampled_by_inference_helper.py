# message: Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.
# code: AD111 (catalogue: inference_requires_grad)
# set: 9
# trigger: a PGD attack starts from random noise drawn by a method of the attacker decorated with
#   @torch.inference_mode(); the loop then asks the noise for its gradient with requires_grad_()
# source: none found; the pattern as users write it (random start of a PGD attack)
# results: adversarial, model
import torch
from torch import nn
import torch.nn.functional as F


class Attack:
    def __init__(self, model, epsilon, steps):
        self.model, self.epsilon, self.steps = model, epsilon, steps

    @torch.inference_mode()  # PRIMARY
    def random_start(self, x):
        return torch.empty_like(x).uniform_(-self.epsilon, self.epsilon)

    def __call__(self, x, y):
        delta = self.random_start(x)
        for _ in range(self.steps):
            delta.requires_grad_(True)
            loss = F.cross_entropy(self.model(x + delta), y)
            (grad,) = torch.autograd.grad(loss, delta)
            delta = (delta + 0.01 * grad.sign()).clamp(-self.epsilon, self.epsilon).detach()
        return x + delta


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
x, y = torch.randn(5, 4), torch.tensor([0, 1, 2, 1, 0])
adversarial = Attack(model, epsilon=0.1, steps=3)(x, y)
