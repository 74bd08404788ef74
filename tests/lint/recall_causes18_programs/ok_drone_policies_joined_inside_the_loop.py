"""Near twin of bad_drone_policies_joined_by_comprehension: the joint action is built by the
same comprehension inside the per-drone loop, after the earlier drones stepped, so every
backward goes through a graph built after every write before it.  Correct."""
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
        for drone in self.drones:
            joint_action = torch.cat([d.policy(observations[i]) for i, d in enumerate(self.drones)], dim=1)
            objective = -self.value(torch.cat([state, joint_action], dim=1)).mean()
            drone.policy_opt.zero_grad()
            objective.backward()
            drone.policy_opt.step()
        return joint_action.detach()


def run():
    torch.manual_seed(0)
    return Swarm().improve_policies([torch.randn(6, 4) for _ in range(3)])
