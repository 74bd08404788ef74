"""A DQN update whose TD errors are formed from an undetached target,
`td_errors = targets - q` (with `targets = rewards + self.gamma * next_q` and `next_q` from the
stepped network), and squared one by one in a `for` loop over them: the loop's header is where
the loss reads them, so the target is still in the loss's graph."""
import torch
import torch.nn as nn


class DQN:
    def __init__(self, gamma=0.9):
        self.gamma = gamma
        self.q_net = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
        self.optimizer = torch.optim.SGD(self.q_net.parameters(), lr=0.01)

    def update(self, states, actions, rewards, next_states):
        q = self.q_net(states).gather(1, actions.unsqueeze(1)).squeeze(1)
        next_q = self.q_net(next_states).max(1)[0]
        targets = rewards + self.gamma * next_q
        td_errors = targets - q
        loss = 0
        for err in td_errors:
            loss = loss + err ** 2
        loss = loss / states.shape[0]
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()


def bug_shows():
    torch.manual_seed(0)
    agent = DQN()
    states, next_states = torch.rand(4, 4), torch.rand(4, 4)
    actions, rewards = torch.tensor([0, 1, 1, 0]), torch.rand(4)
    q = agent.q_net(states).gather(1, actions.unsqueeze(1)).squeeze(1)
    held = ((rewards + agent.gamma * agent.q_net(next_states).max(1)[0].detach() - q) ** 2).mean()
    expected = torch.autograd.grad(held, list(agent.q_net.parameters()))
    agent.optimizer.step = lambda: None
    agent.update(states, actions, rewards, next_states)
    return not all(torch.allclose(e, p.grad, atol=1e-6) for e, p in zip(expected, agent.q_net.parameters()))
