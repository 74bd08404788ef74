"""torch.func.grad(..., has_aux=True) of a function that returns the loss and two auxiliary values
side by side, (loss, logits, accuracy), instead of the pair (loss, aux); the pattern as users write
it (torch.func's grad_and_value docs: "f should return a tuple (output, aux)")."""
import torch
from torch.func import grad

x = torch.tensor([[1.0, 2.0], [0.5, -1.0], [3.0, 0.0]])
labels = torch.tensor([1, 0, 1])
w = torch.tensor([[0.2, -0.4], [0.1, 0.3]])


def loss_and_metrics(w):
    logits = x @ w
    loss = torch.nn.functional.cross_entropy(logits, labels)
    accuracy = (logits.argmax(dim=1) == labels).float().mean()
    return loss, (logits, accuracy)


gw, (logits, accuracy) = grad(loss_and_metrics, has_aux=True)(w)
