"""A rollout buffer for on-policy training."""
import torch


class RolloutBuffer:
    def collect(self, policy, steps, generator):
        observations, actions, returns = [], [], []
        with torch.inference_mode():  # PRIMARY
            for _ in range(steps):
                obs = torch.randn(4, generator=generator) * 0.5
                observations.append(obs)
                actions.append(policy(obs).argmax())
                returns.append(obs.sum())
            self.observations = torch.stack(observations)
            self.actions = torch.stack(actions)
            self.returns = torch.stack(returns)

    def batch(self):
        return self.observations, self.actions, self.returns
