"""A policy runner for a batch of simulated point-mass robots: at each step the trained policy
picks actions under `torch.inference_mode()`, and the environments whose episode ended are reset
in the same block. The reset rebinds the environment's state buffers (`torch.where(done, fresh,
old)`), so inside inference mode they become inference tensors; the next `env.step()`, outside the
block, integrates the dynamics in place (`self.position += ...`) and PyTorch raises "Inplace update
to inference tensor outside InferenceMode is not allowed".
Source: https://github.com/isaac-sim/IsaacLab-Arena/pull/96 ("Fix torch inplace modification
error when termination": the policy runner raised "Inplace update to inference tensor outside
InferenceMode" after an episode terminated; the fix performs the reset operations outside the
inference mode context).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)

N_ENVS, DT, HORIZON = 8, 0.1, 12


class PointMassEnv:
    def __init__(self):
        self.position = torch.randn(N_ENVS, 2)
        self.velocity = torch.zeros(N_ENVS, 2)
        self.steps = torch.zeros(N_ENVS, dtype=torch.long)

    def observe(self):
        return torch.cat([self.position, self.velocity], dim=-1)

    def reset(self, done):
        fresh_position = torch.randn(N_ENVS, 2)
        self.position = torch.where(done[:, None], fresh_position, self.position)
        self.velocity = torch.where(done[:, None], torch.zeros_like(self.velocity), self.velocity)
        self.steps = torch.where(done, torch.zeros_like(self.steps), self.steps)
        return self.observe()

    def step(self, action):
        self.velocity += DT * action.clamp(-1, 1)
        self.position += DT * self.velocity
        self.steps += 1
        reward = -self.position.norm(dim=-1)
        done = (self.steps >= 5) | (self.position.norm(dim=-1) > 3)
        return self.observe(), reward, done


policy = nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 2))
env = PointMassEnv()
obs = env.observe()
done = torch.zeros(N_ENVS, dtype=torch.bool)
rewards = []
for step in range(HORIZON):
    with torch.inference_mode():
        action = policy(obs)
        if done.any():
            obs = env.reset(done)
    obs, reward, done = env.step(action)
    rewards.append(reward.clone())

result = {"rewards": torch.stack(rewards), "position": env.position.clone()}
