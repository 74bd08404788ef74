"""A differentiable drone simulator trains a policy by backpropagation
through time.  Each step the dynamics compute the acceleration from the
thrust, gravity and a quadratic drag on the velocity
(`coeff * vel * vel.norm()`, a product that keeps the velocity for its
backward), and `Integrator.integrate` advances the state with
`pos += d_pos * dt` and `vel += d_vel * dt`, in place on the dynamics' own
tensors.  The next step's integration overwrites the velocity the previous
drag kept, so `actor_loss.backward()` fails ("one of the variables needed
for gradient computation has been modified by an inplace operation").  The
fix returns new state tensors (`vel = vel + d_vel * dt`).
Buggy line: `vel += d_vel * dt` in `Integrator.integrate` (the position
update is in place too, but nothing keeps the position here).
Expected finding: ADL001 there.
Source: https://github.com/SJTU-ViSYS-team/VisFly/pull/35"""
import torch
import torch.nn as nn


class Integrator:
    @staticmethod
    def integrate(pos, vel, acc, dt):
        d_pos = vel
        d_vel = acc
        pos += d_pos * dt
        vel += d_vel * dt  # missed: ADL001
        return pos, vel


class Dynamics:
    def __init__(self, num_agents, dt=0.05, quad_drag_coeff=0.1):
        self.dt = dt
        self.quad_drag_coeff = quad_drag_coeff
        self._position = torch.zeros(3, num_agents)
        self._velocity = torch.zeros(3, num_agents)

    @property
    def position(self):
        return self._position.T

    def reset(self):
        self._position = torch.zeros_like(self._position)
        self._velocity = torch.zeros_like(self._velocity)

    def step(self, thrust):
        gravity = torch.tensor([[0.0], [0.0], [9.81]])
        drag = self.quad_drag_coeff * self._velocity * self._velocity.norm(dim=0, keepdim=True)
        acc = thrust.T - gravity - drag
        self._position, self._velocity = Integrator.integrate(self._position, self._velocity, acc, self.dt)


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 3))

    def forward(self, obs):
        return self.net(obs)


def rollout_bptt(policy, optimizer, dynamics, target, horizon=4):
    dynamics.reset()
    reward = 0.0
    for _ in range(horizon):
        thrust = policy(dynamics.position - target)
        dynamics.step(thrust)
        reward = reward - (dynamics.position - target).norm(dim=1).mean()
    actor_loss = -reward
    optimizer.zero_grad()
    actor_loss.backward()
    optimizer.step()


def run():
    torch.manual_seed(0)
    policy = Policy()
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)
    rollout_bptt(policy, optimizer, Dynamics(2), torch.tensor([[1.0, 0.0, 1.0]]))
