import torch


class HeavyBall:
    """Hand-written momentum SGD for the embedding tables (the built-in one is not used)."""

    def __init__(self, parameters, lr, momentum):
        self.parameters = list(parameters)
        self.lr, self.momentum = lr, momentum
        self.velocity = [torch.zeros_like(p) for p in self.parameters]

    @torch.no_grad()
    def step(self):
        for i, p in enumerate(self.parameters):
            self.velocity[i] = self.momentum * self.velocity[i] + p.grad  # PRIMARY
            p -= self.lr * self.velocity[i]
