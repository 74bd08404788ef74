"""The near twin of bad_agent_apply_gradients_pairs: the same agent takes its gradients from
`torch.autograd.grad`, which returns fresh tensors and adds nothing into `.grad`, so each
update applies this batch's gradient only.  Correct: must stay silent."""
import torch
import torch.nn as nn


class GradientDescent:
    def __init__(self, learning_rate):
        self.learning_rate = learning_rate

    def apply_gradients(self, grads_and_vars):
        with torch.no_grad():
            for grad, var in grads_and_vars:
                var -= self.learning_rate * grad


class ValueAgent:
    def __init__(self, n_features):
        self.net = nn.Sequential(nn.Linear(n_features, 8), nn.Tanh(), nn.Linear(8, 1))
        self.weights = list(self.net.parameters())
        self.optimizer = GradientDescent(0.05)

    def learn(self, batch):
        states, returns = batch
        loss = ((self.net(states).squeeze(1) - returns) ** 2).mean()
        grads = torch.autograd.grad(loss, self.weights)
        self.optimizer.apply_gradients(zip(grads, self.weights))
        return loss.item()


def episodes(n=4):
    torch.manual_seed(3)
    return [(torch.randn(6, 4), torch.randn(6)) for _ in range(n)]


def run():
    torch.manual_seed(0)
    agent = ValueAgent(4)
    for batch in episodes():
        agent.learn(batch)
    return agent
