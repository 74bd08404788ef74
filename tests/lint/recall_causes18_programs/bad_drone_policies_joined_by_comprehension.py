"""Second shape of cause 1: a swarm of drones whose joint action is built by one comprehension
over the drones' policies before the per-drone update loop (no first loop, no list).  Each
iteration backpropagates the shared value of the joint action, keeping the graph, and steps its
own drone's policy: the second drone's backward goes through the first drone's policy, already
stepped in place -- RuntimeError (modified by an inplace operation).  Written for this stop
(causes), before the linter was changed for it."""
import torch
import torch.nn as nn


class Drone:
    def __init__(self, obs_dims, n_actions):
        self.policy = nn.Sequential(nn.Linear(obs_dims, 8), nn.Tanh(), nn.Linear(8, n_actions))
        self.policy_opt = torch.optim.Adam(self.policy.parameters(), lr=1e-2)


class Swarm:
    def __init__(self, n_drones=3, obs_dims=4, n_actions=2):
        self.drones = [Drone(obs_dims, n_actions) for _ in range(n_drones)]
        self.value = nn.Linear(n_drones * (obs_dims + n_actions), 1)

    def improve_policies(self, observations):
        state = torch.cat(observations, dim=1)
        joint_action = torch.cat([drone.policy(observations[i]) for i, drone in enumerate(self.drones)], dim=1)
        for drone in self.drones:
            objective = -self.value(torch.cat([state, joint_action], dim=1)).mean()
            drone.policy_opt.zero_grad()
            objective.backward(retain_graph=True)
            drone.policy_opt.step()
        return joint_action.detach()


def run():
    torch.manual_seed(0)
    return Swarm().improve_policies([torch.randn(6, 4) for _ in range(3)])
