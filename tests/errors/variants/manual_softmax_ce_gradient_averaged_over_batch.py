# message: Mismatch in shape: grad_output[0] has a shape of torch.Size([5]) and output[0] has a shape of torch.Size([6, 5]).
# code: AD123 (catalogue: grad_outputs_shape)
# set: 28
# trigger: a Trainer-like class saves memory by backpropagating a hand-written cross-entropy gradient
#   with logits.backward(gradient); the gradient of the mean loss is written (softmax - one_hot) averaged
#   over the batch with .mean(0), which removes the batch dimension instead of dividing by its size
# source: none found; the pattern as users write it (a fused softmax-cross-entropy gradient by hand)
# results: losses, model
import torch
from torch import nn
import torch.nn.functional as F


class ManualGradientTrainer:
    def __init__(self, model, lr=0.1):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=lr)

    def cross_entropy_gradient(self, logits, labels):
        probabilities = logits.detach().softmax(dim=1)
        targets = F.one_hot(labels, num_classes=logits.shape[1]).to(probabilities.dtype)
        return (probabilities - targets).mean(0)  # PRIMARY

    def step(self, x, labels):
        self.optimizer.zero_grad()
        logits = self.model(x)
        logits.backward(self.cross_entropy_gradient(logits, labels))
        self.optimizer.step()
        return F.cross_entropy(logits.detach(), labels).item()


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 5))
trainer = ManualGradientTrainer(model)
losses = [trainer.step(torch.randn(6, 3), torch.randint(0, 5, (6,))) for _ in range(3)]
