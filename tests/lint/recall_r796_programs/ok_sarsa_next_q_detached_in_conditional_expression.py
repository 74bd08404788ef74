"""The correct twin, the rule's suggested change applied: the branch that calls the network
detaches its value (`self.q_net(next_state)[next_action].detach()`), so the target is a
constant and the step is the semi-gradient TD update."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SarsaLearner:
    def __init__(self, discount=0.95):
        self.discount = discount
        self.q_net = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 2))
        self.optimizer = torch.optim.SGD(self.q_net.parameters(), lr=0.05)

    def learn(self, state, action, reward, next_state, next_action, terminal):
        q = self.q_net(state)[action]
        next_q = self.q_net(next_state)[next_action].detach() if not terminal else torch.tensor(0.0)
        target = reward + self.discount * next_q
        loss = F.smooth_l1_loss(q, target)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()


def is_semi_gradient():
    torch.manual_seed(0)
    learner = SarsaLearner()
    state, next_state = torch.rand(3), torch.rand(3)
    held = F.smooth_l1_loss(learner.q_net(state)[1], 1.0 + learner.discount * learner.q_net(next_state)[0].detach())
    expected = torch.autograd.grad(held, list(learner.q_net.parameters()))
    learner.optimizer.step = lambda: None
    learner.learn(state, 1, 1.0, next_state, 0, False)
    return all(torch.allclose(e, p.grad) for e, p in zip(expected, learner.q_net.parameters()))
