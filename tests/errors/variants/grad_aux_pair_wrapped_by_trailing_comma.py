# message: grad_and_value(f)(*args): output of function f should be a tuple: (output, aux) if has_aux is True
# code: AD234 (catalogue: func_grad_aux_not_a_pair)
# set: 28
# trigger: a functional Trainer-like class takes torch.func.grad(self.compute_loss, has_aux=True) over
#   functional_call; compute_loss ends with `return (loss, accuracy),`: the parenthesised pair followed by
#   a trailing comma is a tuple of one element that holds the pair
# source: none found; the pattern as users write it (a stray trailing comma after a refactor)
# results: losses, accuracies, params
import torch
from torch import nn
import torch.nn.functional as F
from torch.func import functional_call, grad


class FunctionalTrainer:
    def __init__(self, model, lr=0.2):
        self.model = model
        self.lr = lr
        self.params = {name: p.detach().clone() for name, p in model.named_parameters()}

    def compute_loss(self, params, x, labels):
        logits = functional_call(self.model, params, (x,))
        loss = F.cross_entropy(logits, labels)
        accuracy = (logits.argmax(1) == labels).float().mean()
        return (loss, accuracy),  # PRIMARY

    def step(self, x, labels):
        grads, accuracy = grad(self.compute_loss, has_aux=True)(self.params, x, labels)
        self.params = {name: p - self.lr * grads[name] for name, p in self.params.items()}
        return accuracy


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 6), nn.Tanh(), nn.Linear(6, 2))
trainer = FunctionalTrainer(model)
losses, accuracies = [], []
for _ in range(3):
    x, labels = torch.randn(8, 3), torch.randint(0, 2, (8,))
    accuracies.append(trainer.step(x, labels).item())
    losses.append(F.cross_entropy(functional_call(model, trainer.params, (x,)), labels).item())
params = list(trainer.params.values())
