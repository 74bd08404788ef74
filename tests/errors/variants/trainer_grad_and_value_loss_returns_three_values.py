# message: grad_and_value(f)(*args): output of function f should be a tuple: (output, aux) if has_aux
#   is True
# code: AD234 (catalogue: func_grad_aux_not_a_pair)
# set: 13
# trigger: a functional Trainer's method computes the loss with torch.func.grad_and_value(has_aux=True)
#   and its loss method returns the loss, the logits and the number of correct predictions side by
#   side; the caller unpacks the pair it expects
# source: none found; the pattern as users write it (functional training steps with metrics)
# results: list(params.values()), losses, corrects
import torch
import torch.nn.functional as F
from torch.func import functional_call, grad_and_value
from torch import nn


class FunctionalTrainer:
    def __init__(self, model, lr):
        self.model = model
        self.lr = lr

    def loss_and_metrics(self, params, x, labels):
        logits = functional_call(self.model, params, (x,))
        loss = F.cross_entropy(logits, labels)
        correct = (logits.argmax(dim=1) == labels).sum()
        return loss, logits, correct  # PRIMARY

    def step(self, params, x, labels):
        grads, (loss, (logits, correct)) = grad_and_value(self.loss_and_metrics, has_aux=True)(params, x, labels)
        new_params = {name: value - self.lr * grads[name] for name, value in params.items()}
        return new_params, loss.item(), int(correct)


torch.manual_seed(0)
model = nn.Linear(3, 4)
trainer = FunctionalTrainer(model, lr=0.5)
params = {name: value.detach() for name, value in model.named_parameters()}
x, labels = torch.randn(6, 3), torch.tensor([0, 1, 2, 3, 0, 1])
losses, corrects = [], []
for _ in range(2):
    params, loss, correct = trainer.step(params, x, labels)
    losses.append(loss)
    corrects.append(correct)
