# message: params argument given to the optimizer should be an iterable of Tensors or dicts, but got torch.FloatTensor
# code: AD128 (catalogue: optimizer_single_tensor)
# trigger: a soft actor-critic agent gives its learned log-temperature, a single tensor held on
#   self, straight to Adam
# source: https://github.com/KaiyangZhou/Dassl.pytorch/issues/67 (the pattern)
# results: agent.log_alpha
import torch


class Agent:
    def __init__(self, target_entropy):
        self.target_entropy = target_entropy
        self.log_alpha = torch.zeros(1, requires_grad=True)
        self.alpha_optimizer = torch.optim.Adam([self.log_alpha], lr=0.01)  # PRIMARY

    def update_temperature(self, log_probs):
        loss = -(self.log_alpha * (log_probs + self.target_entropy).detach()).mean()
        self.alpha_optimizer.zero_grad()
        loss.backward()
        self.alpha_optimizer.step()


torch.manual_seed(0)
agent = Agent(target_entropy=-2.0)
for _ in range(3):
    agent.update_temperature(torch.randn(8))
