"""neural_clbf trains a neural control barrier/Lyapunov function with
PyTorch Lightning.  `descent_loss` computes, per scenario, the violation of
the decrease condition `violation = F.relu(eps + Vdot + self.clf_lambda *
V)` and masks it to the states where it applies with `violation *=
condition_active`.  `relu` keeps its output for backward, so the in-place
mask makes the step Lightning runs on `training_step`'s loss fail ("one of
the variables needed for gradient computation has been modified by an
inplace operation").  The fix masks out of place.
Buggy line: `violation *= condition_active` in `NeuralCLBFController.descent_loss`.
Expected finding: ADL001 there.
Source: https://github.com/MIT-REALM/neural_clbf/issues/11"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class InvertedPendulum:
    n_dims = 2
    n_controls = 1

    def __init__(self, scenarios):
        self.scenarios = scenarios

    def control_affine_dynamics(self, x, params):
        f = torch.stack([x[:, 1], params["g"] * torch.sin(x[:, 0])], dim=1)
        g = torch.zeros(x.shape[0], 2, 1)
        g[:, 1, 0] = 1.0 / params["m"]
        return f, g


class NeuralCLBFController(nn.Module):
    def __init__(self, dynamics_model, clf_lambda=1.0):
        super().__init__()
        self.dynamics_model = dynamics_model
        self.scenarios = dynamics_model.scenarios
        self.n_scenarios = len(self.scenarios)
        self.clf_lambda = clf_lambda
        self.V_nn = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 1))
        self.u_nn = nn.Linear(2, 1)

    def V_with_jacobian(self, x):
        x = x.requires_grad_(True)
        V = self.V_nn(x).pow(2)
        JV = torch.autograd.grad(V.sum(), x, create_graph=True)[0]
        return V, JV

    def V_lie_derivatives(self, x):
        V, gradV = self.V_with_jacobian(x)
        Lf_V = torch.zeros(x.shape[0], self.n_scenarios, 1)
        Lg_V = torch.zeros(x.shape[0], self.n_scenarios, 1)
        for i, s in enumerate(self.scenarios):
            f, g = self.dynamics_model.control_affine_dynamics(x, params=s)
            Lf_V[:, i, :] = (gradV * f).sum(1, keepdim=True)
            Lg_V[:, i, :] = torch.bmm(gradV.unsqueeze(1), g).squeeze(1)
        return V, Lf_V, Lg_V

    def descent_loss(self, x, goal_mask, safe_mask, unsafe_mask):
        eps = 1.0
        condition_active = torch.logical_not(goal_mask).float().unsqueeze(1)
        u_qp = self.u_nn(x)
        V, Lf_V, Lg_V = self.V_lie_derivatives(x)
        clbf_descent_term_lin = torch.tensor(0.0)
        for i, s in enumerate(self.scenarios):
            Vdot = Lf_V[:, i, :].unsqueeze(1) + torch.bmm(Lg_V[:, i, :].unsqueeze(1), u_qp.reshape(-1, 1, 1))
            Vdot = Vdot.reshape(V.shape)
            violation = F.relu(eps + Vdot + self.clf_lambda * V)
            violation *= condition_active  # expect: ADL001
            clbf_descent_term_lin = clbf_descent_term_lin + violation.mean()
        return [("CLBF descent term (linearized)", clbf_descent_term_lin)]

    def training_step(self, batch, batch_idx):
        x, goal_mask, safe_mask, unsafe_mask = batch
        component_losses = dict(self.descent_loss(x, goal_mask, safe_mask, unsafe_mask))
        return sum(component_losses.values())


def run():
    torch.manual_seed(0)
    dynamics = InvertedPendulum([{"m": 1.0, "g": 9.81}, {"m": 1.2, "g": 9.81}])
    controller = NeuralCLBFController(dynamics)
    optimizer = torch.optim.Adam(controller.parameters(), lr=1e-3)
    x = torch.randn(8, 2)
    goal = x.norm(dim=1) < 0.3
    loss = controller.training_step((x, goal, x.norm(dim=1) < 1.0, x.norm(dim=1) > 2.0), 0)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
