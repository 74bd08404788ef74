"""AD170: inside a module's forward, a value that requires grad copied into one of the module's
parameters through `.data`: the loss's gradient stops at the parameter. Named at the copy, with
advice; running the layers on the values (the advice, written by hand) gives a reference's values.
A soft update of a target network outside a forward, a copy of a detached value, and a copy under
no_grad stay silent."""

import torch

from helpers import run_plain, run_program

# The source of the report: https://github.com/izmailovpavel/understandingbdl/issues/8
SAMPLED_WEIGHTS = """
    import torch
    import torch.nn as nn

    torch.manual_seed(0)


    class VariationalNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.base = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 1))
            count = sum(p.numel() for p in self.base.parameters())
            self.mu = nn.Parameter(torch.cat([p.detach().reshape(-1) for p in self.base.parameters()]))
            self.log_sigma = nn.Parameter(torch.full((count,), -3.0))

        def forward(self, x):
            w = self.mu + torch.randn(self.mu.shape) * self.log_sigma.exp()
            offset = 0
            for param in self.base.parameters():
                param.data.copy_(w[offset:offset + param.numel()].view(param.shape))  # COPY
                offset += param.numel()
            return self.base(x)


    model = VariationalNet()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    x, y = torch.randn(16, 2), torch.randn(16, 1)
    for step in range(3):
        loss = ((model(x) - y) ** 2).mean() + 1e-3 * (model.mu ** 2).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    learned = [model.mu.detach().clone(), model.log_sigma.detach().clone()]
"""

# The advice, written by hand: the layers run on the sampled values.
ON_THE_VALUES = SAMPLED_WEIGHTS.replace("""            offset = 0
            for param in self.base.parameters():
                param.data.copy_(w[offset:offset + param.numel()].view(param.shape))  # COPY
                offset += param.numel()
            return self.base(x)""", """            offset, values = 0, {}
            for name, param in self.base.named_parameters():
                values[name] = w[offset:offset + param.numel()].view(param.shape)
                offset += param.numel()
            return torch.func.functional_call(self.base, values, (x,))""")

# What the program means, written without the base network's parameters.
REFERENCE = SAMPLED_WEIGHTS.replace("""            offset = 0
            for param in self.base.parameters():
                param.data.copy_(w[offset:offset + param.numel()].view(param.shape))  # COPY
                offset += param.numel()
            return self.base(x)""", """            w1, b1 = w[:8].view(4, 2), w[8:12]
            w2, b2 = w[12:16].view(1, 4), w[16:17]
            return torch.tanh(x @ w1.t() + b1) @ w2.t() + b2""")


def test_a_sampled_value_copied_into_a_parameter_is_reported_at_the_copy(tmp_path):
    outcome = run_program(tmp_path, SAMPLED_WEIGHTS)
    assert [d.code for d in outcome.diagnoses] == ["AD170"]
    assert outcome.diagnosis.primary.line == outcome.line("COPY")
    assert "invisible to autograd" in outcome.diagnosis.notes[1]
    assert outcome.diagnosis.help[0].replacement is None
    assert "torch.func.functional_call" in outcome.diagnosis.help[0].message


def test_running_the_layers_on_the_values_gives_the_references_values(tmp_path):
    plain = run_plain(tmp_path, ON_THE_VALUES)
    reference = run_plain(tmp_path, REFERENCE, name="reference.py")
    original = run_plain(tmp_path, SAMPLED_WEIGHTS, name="original.py")
    assert all(torch.allclose(a, b, rtol=1e-5, atol=1e-6) for a, b in zip(plain["learned"], reference["learned"]))
    assert not torch.allclose(original["learned"][1], reference["learned"][1])  # the scales learned nothing
    assert run_program(tmp_path, ON_THE_VALUES, name="fixed.py").diagnoses == []


def test_soft_updates_detached_copies_and_copies_under_no_grad_are_silent(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.layer = nn.Linear(3, 1)
                self.mu = nn.Parameter(torch.randn(1, 3))

            def forward(self, x):
                self.layer.weight.data.copy_(self.mu.detach())
                with torch.no_grad():
                    self.layer.bias.data.copy_(self.mu.sum().view(1))
                return self.layer(x)

        online, target = nn.Linear(3, 1), nn.Linear(3, 1)
        net = Net()
        optimizer = torch.optim.SGD(list(online.parameters()) + list(net.parameters()), lr=0.1)
        for _ in range(3):
            x = torch.randn(4, 3)
            loss = (online(x) - target(x).detach()).pow(2).mean() + net(x).pow(2).mean() + net.mu.pow(2).sum()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            for t, p in zip(target.parameters(), online.parameters()):
                t.data.copy_(0.9 * t + 0.1 * p)
    """)
    assert outcome.diagnoses == []
