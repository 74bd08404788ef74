"""AD165: second derivatives taken with one torch.autograd.grad call over a whole first derivative
(a ones grad_outputs), whose result is then read column by column as u_xx, u_yy. Each column sums
a row of the Hessian, mixed partials included. The line named is the second call; the help
differentiates each column on its own, and gives a reference's values and gradients exactly. A
first derivative with one coordinate, or second derivatives taken per column, stay silent."""

import torch

from helpers import apply_help, run_plain, run_program

# The source of the report: https://github.com/prateekbhustali/Physics-Informed-Neural-Networks/issues/4
LAPLACIAN = """
    import torch
    import torch.nn as nn

    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 1))
    g = torch.rand(10, 2, requires_grad=True)
    u = net(g)
    u_g = torch.autograd.grad(u, g, grad_outputs=torch.ones_like(u), create_graph=True)[0]  # FIRST
    u_gg = torch.autograd.grad(u_g, g, grad_outputs=torch.ones_like(u_g), create_graph=True)[0]  # SECOND
    laplacian = u_gg[:, [0]] + u_gg[:, [1]]
    loss = ((laplacian + u) ** 2).mean()
    loss.backward()
    values = laplacian.detach()
    grads = [p.grad.clone() for p in net.parameters()]
"""

# A hand-written reference: each second derivative from its own column.
REFERENCE = """
    import torch
    import torch.nn as nn

    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 1))
    g = torch.rand(10, 2, requires_grad=True)
    u = net(g)
    u_g = torch.autograd.grad(u, g, grad_outputs=torch.ones_like(u), create_graph=True)[0]
    u_x, u_y = u_g[:, [0]], u_g[:, [1]]
    u_xx = torch.autograd.grad(u_x, g, grad_outputs=torch.ones_like(u_x), create_graph=True)[0][:, [0]]
    u_yy = torch.autograd.grad(u_y, g, grad_outputs=torch.ones_like(u_y), create_graph=True)[0][:, [1]]
    laplacian = u_xx + u_yy
    loss = ((laplacian + u) ** 2).mean()
    loss.backward()
    values = laplacian.detach()
    grads = [p.grad.clone() for p in net.parameters()]
"""


def test_the_second_call_over_the_whole_first_derivative_is_reported(tmp_path):
    outcome = run_program(tmp_path, LAPLACIAN)
    assert [d.code for d in outcome.diagnoses] == ["AD165"]
    diagnosis = outcome.diagnosis
    assert diagnosis.primary.line == outcome.line("SECOND")
    assert [location.line for location in diagnosis.related] == [outcome.line("FIRST")]
    assert "mixed partials" in diagnosis.primary.note
    assert "differentiate each column of the first derivative on its own" in diagnosis.help[0].message


def test_the_help_gives_the_references_values_and_gradients(tmp_path):
    outcome = run_program(tmp_path, LAPLACIAN)
    fixed = apply_help(outcome)
    assert ("u_gg = torch.cat([torch.autograd.grad(u_g[..., [column]], g, grad_outputs=torch.ones_like("
            "u_g[..., [column]]), create_graph=True)[0][..., [column]] for column in range(u_g.shape[-1])], "
            "dim=-1)") in fixed
    plain = run_plain(tmp_path, fixed)
    reference = run_plain(tmp_path, REFERENCE, name="reference.py")
    assert torch.equal(plain["values"], reference["values"])
    assert all(torch.equal(a, b) for a, b in zip(plain["grads"], reference["grads"]))
    assert not torch.equal(outcome.namespace["values"], reference["values"])  # the bug changed the values


def test_a_column_picked_in_the_same_statement_is_reported_and_fixed(tmp_path):
    source = LAPLACIAN.replace(
        "u_gg = torch.autograd.grad(u_g, g, grad_outputs=torch.ones_like(u_g), create_graph=True)[0]  # SECOND\n"
        "    laplacian = u_gg[:, [0]] + u_gg[:, [1]]",
        "u_xx = torch.autograd.grad(u_g, g, grad_outputs=torch.ones_like(u_g), create_graph=True)[0][:, [0]]  # SECOND\n"
        "    laplacian = u_xx")
    outcome = run_program(tmp_path, source)
    assert outcome.diagnosis.code == "AD165" and outcome.diagnosis.primary.line == outcome.line("SECOND")
    plain = run_plain(tmp_path, apply_help(outcome))
    reference = run_plain(tmp_path, REFERENCE.replace("laplacian = u_xx + u_yy", "laplacian = u_xx"), name="reference.py")
    assert torch.equal(plain["values"], reference["values"])
    assert all(torch.equal(a, b) for a, b in zip(plain["grads"], reference["grads"]))


def test_second_derivatives_taken_per_column_are_silent(tmp_path):
    outcome = run_program(tmp_path, REFERENCE)
    assert outcome.diagnoses == []


def test_a_single_coordinate_is_silent(tmp_path):
    # u(x) of one coordinate: the one column is the second derivative itself.
    source = """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        net = nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 1))
        x = torch.rand(10, 1, requires_grad=True)
        u = net(x)
        u_x = torch.autograd.grad(u, x, grad_outputs=torch.ones_like(u), create_graph=True)[0]
        u_xx = torch.autograd.grad(u_x, x, grad_outputs=torch.ones_like(u_x), create_graph=True)[0]
        ((u_xx[:, 0] + u[:, 0]) ** 2).mean().backward()
    """
    assert run_program(tmp_path, source).diagnoses == []


def test_a_result_not_read_by_column_is_silent(tmp_path):
    # The row sums of the Hessian used as a whole (a directional derivative along (1, 1)): no
    # column is taken for a diagonal entry, so nothing says the sum was not meant.
    source = LAPLACIAN.replace("laplacian = u_gg[:, [0]] + u_gg[:, [1]]", "laplacian = u_gg.sum(-1, keepdim=True)")
    assert run_program(tmp_path, source).diagnoses == []
