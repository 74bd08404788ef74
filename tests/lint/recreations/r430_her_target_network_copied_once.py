"""The HER notebook (higgsfield's RL-Adventure) builds `model` and
`target_model` and calls `update_target(model, target_model)` once, before
training; `compute_td_error` then bootstraps from `target_model` on every
update, but the target is never copied again.  The targets come from the
untrained network for the whole run ("the code only updates the target
network once").  Nothing raises.  The fix calls `update_target` every few
updates inside the training loop.
Buggy line: the training loop of `train`, which never calls `update_target`.
Source: https://github.com/higgsfield-ai/higgsfield/issues/14"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, num_inputs, num_outputs):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(num_inputs, 16), nn.ReLU(), nn.Linear(16, num_outputs))

    def forward(self, x):
        return self.layers(x)


def update_target(current_model, target_model):
    target_model.load_state_dict(current_model.state_dict())


def compute_td_error(model, target_model, optimizer, batch, gamma=0.9):
    state, action, reward, next_state, done = batch
    q_value = model(state).gather(1, action.unsqueeze(1)).squeeze(1)
    next_q_value = target_model(next_state).max(1)[0]
    expected_q_value = reward + gamma * next_q_value * (1 - done)
    loss = (q_value - expected_q_value.detach()).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss


def train(num_bits=4, updates=6, batches=None):
    model = Model(2 * num_bits, num_bits)
    target_model = Model(2 * num_bits, num_bits)
    update_target(model, target_model)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for frame in range(updates):  # missed: no rule (target copied before the loop only)
        compute_td_error(model, target_model, optimizer, batches[frame % len(batches)])
    return model, target_model


def bug_shows():
    """After training, the target network still holds the initial weights."""
    torch.manual_seed(0)
    batches = [(torch.randn(8, 8), torch.randint(0, 4, (8,)), torch.randn(8), torch.randn(8, 8),
                torch.zeros(8)) for _ in range(3)]
    torch.manual_seed(1)
    initial = Model(8, 4).state_dict()
    torch.manual_seed(1)
    model, target = train(batches=batches)
    return all(torch.equal(initial[k], v) for k, v in target.state_dict().items())
