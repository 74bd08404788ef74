"""An ODE solved until an event: `odeint_event` (torchdiffeq's; a small stand-in with the same
call is written here, torchdiffeq not being installed) integrates the state and evaluates the event
function at each step under `torch.no_grad()`, to save memory. The user's event function detects a
steady state from the gradient of an energy, `grad(f, x, create_graph=True)`: under the solver's
no_grad `f` has no graph, and the call raises "element 0 of tensors does not require grad and does
not have a grad_fn". The maintainer's fix: compute the gradient inside `with torch.enable_grad():`.
Source: https://github.com/rtqichen/torchdiffeq/issues/179
expect: raises"""
import torch
from torch.autograd import grad


def odeint_event(func, y0, t0, *, event_fn, step=0.05, max_steps=400):
    # Explicit Euler steps until event_fn changes sign; the event is evaluated without a graph.
    t, y = t0, y0
    with torch.no_grad():
        previous = event_fn(t, y)
    for _ in range(max_steps):
        y = y + step * func(t, y)
        t = t + step
        with torch.no_grad():
            value = event_fn(t, y)
        if torch.sign(value) != torch.sign(previous):
            break
        previous = value
    return t, y


def rhs(t, x):
    return -x


def event_fn(t, x):
    with torch.enable_grad():
        f = (x ** 2).sum()
        g = grad(f, x, create_graph=True, retain_graph=True)[0]
    # the state has settled once the energy's gradient is small
    return g.norm() - 0.1


x = torch.tensor([-0.0881, 0.4923], requires_grad=True)
event_t, state = odeint_event(rhs, x, torch.tensor([0.]), event_fn=event_fn)
print(event_t, state)

result = {"event_t": event_t, "state": state.detach()}
