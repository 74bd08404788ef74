"""Deep Q-learning as in PyTorch's 2017 reinforcement-learning tutorial (`optimize_model`): the
gradients are meant to be clipped to [-1, 1] before the RMSprop step, but the line written is
`param.grad.data.clamp(-1, 1)`, the out-of-place clamp. It returns a clipped copy that is thrown
away; the gradients stay unclipped and the optimizer takes the large, noisy steps the clipping was
there to prevent (no error, no warning).
Source: https://github.com/pytorch/tutorials/pull/30 ("Fixed clamp not being applied to
parameters": "I think the line `param.grad.data.clamp(-1, 1)` has no effect. I guess you wanted to
do it *in-place*, which is `clamp_`"; maintainer: "Yeah, my bad. Thanks for the fix!").
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DQN(nn.Module):
    def __init__(self, n_inputs=4, n_actions=2):
        super().__init__()
        self.head = nn.Sequential(nn.Linear(n_inputs, 32), nn.ReLU(), nn.Linear(32, n_actions))

    def forward(self, x):
        return self.head(x)


model = DQN()
target_model = DQN()
target_model.load_state_dict(model.state_dict())
optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-2)
GAMMA = 0.99

# A fixed replay batch of transitions; large observations and rewards give gradients well above 1.
states = torch.randn(16, 4) * 20
actions = torch.randint(0, 2, (16, 1))
rewards = torch.randn(16) * 10
next_states = torch.randn(16, 4) * 20
non_final = torch.rand(16) > 0.2

losses = []
for step in range(6):
    state_action_values = model(states).gather(1, actions).squeeze(1)
    next_state_values = torch.zeros(16)
    with torch.no_grad():
        next_state_values[non_final] = target_model(next_states[non_final]).max(1)[0]
    expected_state_action_values = next_state_values * GAMMA + rewards
    loss = F.smooth_l1_loss(state_action_values, expected_state_action_values)

    optimizer.zero_grad()
    loss.backward()
    for param in model.parameters():
        param.grad.data.clamp_(-1, 1)
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters()]}
