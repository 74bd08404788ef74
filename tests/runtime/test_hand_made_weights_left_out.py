"""AD213 for weights made by hand: the optimizer holds plain leaf tensors
(`w = torch.randn(...).requires_grad_()`) and one made the same way, used with them by the
network's function, is left out of the list it is built from. Named at that list; the help puts
the tensor in it, which gives a reference's values exactly. An input the program differentiates
with respect to (a physics-informed network's collocation points) stays silent."""

import torch

from helpers import apply_help, run_plain, run_program

# The source of the report: https://github.com/fzenke/spytorch/issues/7 (fix: commit bbab0a2)
RECURRENT = """
    import torch

    torch.manual_seed(0)
    w1 = (torch.randn(4, 8) * 0.5).requires_grad_()
    v1 = (torch.randn(8, 8) * 0.2).requires_grad_()
    w2 = (torch.randn(8, 2) * 0.5).requires_grad_()


    def run_network(inputs):
        from_input = inputs @ w1
        h = torch.zeros(inputs.shape[1], 8)
        for t in range(inputs.shape[0]):
            h = torch.tanh(from_input[t] + h @ v1)
        return h @ w2


    inputs, targets = torch.randn(5, 3, 4), torch.randn(3, 2)
    params = [w1, w2]  # LIST
    optimizer = torch.optim.Adam(params, lr=1e-2)
    for step in range(3):
        loss = ((run_network(inputs) - targets) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    learned = [w1.detach().clone(), v1.detach().clone(), w2.detach().clone()]
"""

REFERENCE = RECURRENT.replace("params = [w1, w2]  # LIST", "params = [w1, w2, v1]")


def test_a_hand_made_weight_left_out_is_reported_at_the_list(tmp_path):
    outcome = run_program(tmp_path, RECURRENT)
    assert [d.code for d in outcome.diagnoses] == ["AD213"]
    assert outcome.diagnosis.primary.line == outcome.line("LIST")
    assert outcome.diagnosis.notes[0].startswith("v1 (float32[8, 8]) got gradients")
    assert outcome.diagnosis.help[0].message.startswith("if v1 is meant to train with the model: put it in the list")


def test_the_help_gives_the_references_values(tmp_path):
    outcome = run_program(tmp_path, RECURRENT)
    fixed = apply_help(outcome)
    assert "params = [w1, w2, v1]" in fixed
    plain = run_plain(tmp_path, fixed)
    reference = run_plain(tmp_path, REFERENCE, name="reference.py")
    assert all(torch.equal(a, b) for a, b in zip(plain["learned"], reference["learned"]))


def test_an_input_differentiated_with_respect_to_is_silent(tmp_path):
    outcome = run_program(tmp_path, """
        import torch

        torch.manual_seed(0)
        w1 = torch.randn(1, 16, requires_grad=True)
        w2 = torch.randn(16, 1, requires_grad=True)
        x = torch.linspace(0, 1, 32).reshape(-1, 1).requires_grad_()


        def u_of(points):
            return torch.tanh(points @ w1) @ w2


        optimizer = torch.optim.Adam([w1, w2], lr=1e-2)
        for step in range(3):
            u = u_of(x)
            u_x = torch.autograd.grad(u, x, torch.ones_like(u), create_graph=True)[0]
            loss = ((u_x - torch.cos(x)) ** 2).mean() + u_of(torch.zeros(1, 1)).pow(2).sum()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    """)
    assert outcome.diagnoses == []
