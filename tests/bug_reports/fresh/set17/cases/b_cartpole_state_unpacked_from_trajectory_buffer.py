"""Learning a cart-pole's pole length and masses from an expert trajectory (system
identification through a differentiable simulator, as in pypose's MPC examples). The rollout
preallocates the trajectory, `traj = torch.zeros(T, 4)`, and writes each next state into it,
`traj[t + 1] = cartpole_step(traj[t], ...)`. The dynamics unpack the state row,
`x, x_dot, theta, theta_dot = state`: iterating a tensor is `unbind`, whose outputs are views of
the buffer, and `cos(theta)`/`sin(theta)` save them for backward. The next row's write modifies
their base, and `loss.backward()` raises "Output 3 of Unbind is a view and its base or
another view of its base has been modified inplace. This view is the output of a function that
returns multiple views."
Source: https://github.com/pypose/pypose/issues/344 ("MPC examples do not work": the cart-pole
example, whose `state_transition` unpacks `x, xDot, theta, thetaDot = state.squeeze()` from rows
of a preallocated `current_x` written with `current_x[..., i + 1, :] = ...`, fails at
`traj_loss.backward()` with "Output 3 of UnbindBackward0 is a view and its base ... has been
modified inplace"; building the trajectory without writing into the buffer runs).
expect: raises"""
import torch

torch.manual_seed(0)

T, DT, GRAVITY = 20, 0.05, 9.81


def cartpole_step(state, force, length, cart_mass, pole_mass):
    x, x_dot, theta, theta_dot = state
    cos_t, sin_t = torch.cos(theta), torch.sin(theta)
    total = cart_mass + pole_mass
    temp = (force + pole_mass * length * theta_dot ** 2 * sin_t) / total
    theta_acc = (GRAVITY * sin_t - cos_t * temp) / (length * (4.0 / 3.0 - pole_mass * cos_t ** 2 / total))
    x_acc = temp - pole_mass * length * theta_acc * cos_t / total
    return torch.stack((x + DT * x_dot, x_dot + DT * x_acc, theta + DT * theta_dot, theta_dot + DT * theta_acc))


def rollout(forces, length, cart_mass, pole_mass):
    traj = torch.zeros(T, 4)
    traj[0] = torch.tensor([0.0, 0.0, 0.3, 0.0])
    for t in range(T - 1):
        traj[t + 1] = cartpole_step(traj[t], forces[t], length, cart_mass, pole_mass)
    return traj


forces = torch.sin(torch.arange(T, dtype=torch.float32) * DT * 4)
with torch.no_grad():
    expert = rollout(forces, torch.tensor(1.5), torch.tensor(2.0), torch.tensor(1.0))

length = torch.tensor(1.2, requires_grad=True)
cart_mass = torch.tensor(2.4, requires_grad=True)
pole_mass = torch.tensor(0.8, requires_grad=True)
optimizer = torch.optim.RMSprop([length, cart_mass, pole_mass], lr=1e-2)
losses = []
for iteration in range(5):
    traj = rollout(forces, length, cart_mass, pole_mass)
    loss = ((traj - expert) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in (length, cart_mass, pole_mass)]}
