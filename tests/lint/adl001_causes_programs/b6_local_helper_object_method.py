"""A training function builds a plain simulator object and hands its step the
policy's action; the step squashes it with `sigmoid` and clips the first
entry in place, on the memory sigmoid keeps: backward() raises."""
import torch
import torch.nn as nn


class Simulator:
    def __init__(self, gain=2.0):
        self.gain = gain

    def step(self, state, action):
        throttle = torch.sigmoid(action)
        throttle[:, 0] = 0.0  # ADL001
        return state + self.gain * throttle


def train(policy, states, lr=0.1):
    optimizer = torch.optim.SGD(policy.parameters(), lr=lr)
    sim = Simulator()
    nxt = sim.step(states, policy(states))
    loss = nxt.pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


def run():
    torch.manual_seed(0)
    policy = nn.Linear(3, 3)
    train(policy, torch.randn(4, 3))
    return [p.detach().clone() for p in policy.parameters()]
