# message: backward() called inside a functorch transform. This is not supported, please use functorch.grad
#   or functorch.vjp instead or call backward() outside of functorch transforms.
# code: AD141 (catalogue: func_grad_backward_inside)
# set: 14
# trigger: a Trainer-like class moved to torch.func: its compute_loss method (functional_call of
#   the model on a dict of parameters) still ends with loss.backward() from the tape version, and is
#   given to torch.func.grad; the parameters are then updated by hand
# source: none found; the pattern as users write it (a loop ported to torch.func.functional_call)
# results: list(params.values()), losses
import torch
from torch import nn
from torch.func import functional_call, grad


class FunctionalTrainer:
    def __init__(self, model, lr):
        self.model, self.lr = model, lr

    def compute_loss(self, params, x, y):
        prediction = functional_call(self.model, params, (x,))
        loss = nn.functional.mse_loss(prediction, y)
        return loss

    def step(self, params, x, y):
        grads = grad(self.compute_loss)(params, x, y)
        return {name: p - self.lr * grads[name] for name, p in params.items()}


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
params = {name: p.detach() for name, p in model.named_parameters()}
trainer = FunctionalTrainer(model, lr=0.1)
x, y = torch.randn(6, 3), torch.randn(6, 1)
losses = []
for _ in range(3):
    params = trainer.step(params, x, y)
    losses.append(nn.functional.mse_loss(functional_call(model, params, (x,)), y).item())
