"""Soft actor-critic with a state-value network (the first SAC paper's version), as
written in several public student/course implementations found by the project's code
search (stored file ids 20082869855, 20314202569, 20641342817 and 36020812191, near
copies of one another; the index does not name their repositories): the policy's new
action is a reparameterised sample, `expected_new_q_value = min(Q1(s, a_new), Q2(s, a_new))`
feeds the value target, and under `if self.reparam:` ("reparameterization trick") the
policy loss is `(log_prob - expected_new_q_value.detach()).mean()`.  With the
reparameterisation trick the gradient of the objective `E[log pi(a|s) - Q(s, a)]` reaches
the policy through `Q(s, a(eps))`; detaching it leaves only the entropy term, so the policy
never moves towards higher Q (the non-reparameterised branch, a likelihood-ratio loss
`log_prob * (log_prob - target).detach()`, detaches correctly).
Re-created in my own words as a function with the update steps of one batch;
`bug_shows()` shows the policy's gradient equal to that of `log_prob.mean()` alone and
different from the written-out objective's.
The same line, `policy_loss = (log_prob - new_q_value.detach()).mean()` in the
reparameterised branch, is in an early SAC policy whose names (`register_policy`,
`soft_q_data`, `_forward_learn`) are those of OpenDILab's DI-engine (index id
12012264373; repository not named by the index, so attributed by those names only).
Buggy line: `policy_loss = (log_prob - expected_new_q_value.detach()).mean()`.
Source: https://github.com/search?q=%22expected_new_q_value.detach()%29.mean()%22&type=code
(the copies as the project's code index stores them) and https://github.com/opendilab/DI-engine"""
import torch
import torch.nn as nn


class Policy(nn.Module):
    def __init__(self, s=5, a=1):
        super().__init__()
        self.h = nn.Linear(s, 10)
        self.mean_head = nn.Linear(10, a)
        self.log_std_head = nn.Linear(10, a)

    def evaluate(self, state, noise):
        x = torch.relu(self.h(state))
        mean, log_std = self.mean_head(x), self.log_std_head(x).clamp(-5, 1)
        std = log_std.exp()
        pre = mean + std * noise
        action = torch.tanh(pre)
        log_prob = torch.distributions.Normal(mean, std).log_prob(pre) - torch.log(1 - action.pow(2) + 1e-6)
        return action, log_prob


class SoftQ(nn.Module):
    def __init__(self, s=5, a=1):
        super().__init__()
        self.f = nn.Sequential(nn.Linear(s + a, 10), nn.ReLU(), nn.Linear(10, 1))

    def forward(self, state, action):
        return self.f(torch.cat([state, action], 1))


def soft_update_step(variant, reparam=True):
    torch.manual_seed(2)
    policy, q1, q2, value = Policy(), SoftQ(), SoftQ(), nn.Linear(5, 1)
    policy_optimizer = torch.optim.Adam(policy.parameters(), lr=3e-4)
    value_optimizer = torch.optim.Adam(value.parameters(), lr=3e-4)
    state, noise = torch.randn(7, 5), torch.randn(7, 1)
    new_action, log_prob = policy.evaluate(state, noise)
    expected_new_q_value = torch.min(q1(state, new_action), q2(state, new_action))
    v_target = expected_new_q_value - log_prob
    value_loss = ((value(state) - v_target.detach()) ** 2).mean()
    value_optimizer.zero_grad()
    value_loss.backward(retain_graph=True)
    value_optimizer.step()
    if variant == "bug":
        policy_loss = (log_prob - expected_new_q_value.detach()).mean()  # expect: ADL041
    elif variant == "entropy":
        policy_loss = log_prob.mean()
    else:
        policy_loss = (log_prob - expected_new_q_value).mean()
    policy_optimizer.zero_grad()
    policy_loss.backward()
    grads = [p.grad.clone() for p in policy.parameters()]
    policy_optimizer.step()
    return grads


def bug_shows():
    bug, entropy, right = soft_update_step("bug"), soft_update_step("entropy"), soft_update_step("right")
    return all(torch.equal(a, b) for a, b in zip(bug, entropy)) and \
        any(not torch.allclose(a, b) for a, b in zip(bug, right))


def run():
    return soft_update_step("bug")


if __name__ == "__main__":
    print(bug_shows())
