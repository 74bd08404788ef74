"""ModelRepo's MADDPG updates each agent's actor with the critic's value of
the joint action, but feeds the critic the actions stored in the replay
buffer instead of the actor's own output for agent i.  The actor's loss then
does not depend on the actor's parameters: backward leaves them without a
gradient and `actor_optimizer.step()` changes nothing, so the policies never
learn.  Nothing raises.  The fix puts `actor(obs_i)` into the joint action
for agent i.
Buggy line: `q = critic(obs, act)` in `MADDPGAgent.update_actor`, `act`
from the buffer.
Expected finding: none (no rule checks that a loss reaches the parameters
of the optimizer that steps after its backward).
Source: https://github.com/KornbergFresnel/ModelRepo/issues/2"""
import torch
import torch.nn as nn


class Actor(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, 8), nn.ReLU(), nn.Linear(8, act_dim), nn.Tanh())

    def forward(self, obs):
        return self.net(obs)


class Critic(nn.Module):
    def __init__(self, joint_obs_dim, joint_act_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(joint_obs_dim + joint_act_dim, 8), nn.ReLU(), nn.Linear(8, 1))

    def forward(self, obs, act):
        return self.net(torch.cat([obs, act], dim=-1))


class MADDPGAgent:
    def __init__(self, index, obs_dim, act_dim, n_agents):
        self.index = index
        self.actor = Actor(obs_dim, act_dim)
        self.critic = Critic(obs_dim * n_agents, act_dim * n_agents)
        self.actor_optimizer = torch.optim.Adam(self.actor.parameters(), lr=0.01)

    def update_actor(self, batch):
        obs, act = batch["obs"], batch["act"]
        q = self.critic(obs, act)  # missed: none
        actor_loss = -q.mean()
        self.actor_optimizer.zero_grad()
        actor_loss.backward()
        self.actor_optimizer.step()
        return actor_loss


def bug_shows():
    """The actor gets no gradient at all from its loss."""
    torch.manual_seed(0)
    agent = MADDPGAgent(0, obs_dim=3, act_dim=2, n_agents=2)
    batch = {"obs": torch.randn(5, 6), "act": torch.rand(5, 4) * 2 - 1}
    before = [p.detach().clone() for p in agent.actor.parameters()]
    agent.update_actor(batch)
    return all(p.grad is None for p in agent.actor.parameters()) and all(
        torch.equal(b, p) for b, p in zip(before, agent.actor.parameters())
    )
