"""Correct programs: the doctor stays silent and changes nothing."""

import pytest
import torch

from helpers import run_program

CORRECT_PROGRAMS = {
    "training loop with an optimizer": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(inplace=True), nn.Linear(16, 1))
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
        losses = []
        for step in range(5):
            optimizer.zero_grad()
            loss = model(torch.randn(4, 8)).pow(2).mean()
            loss.backward()
            optimizer.step()
            losses.append(loss)  # keeping the loss (and its graph) alive is harmless
    """,
    "batchnorm running statistics": """
        import torch
        from torch import nn
        model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 1))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        for _ in range(3):
            optimizer.zero_grad()
            model(torch.randn(16, 4)).mean().backward()
            optimizer.step()
        model.eval()
        model(torch.randn(2, 4))
    """,
    "in-place ops under no_grad": """
        import torch
        w = torch.randn(3, requires_grad=True)
        y = torch.sigmoid(w)
        loss = y.sum()
        loss.backward()
        with torch.no_grad():
            w -= 0.1 * w.grad
            w.grad.zero_()
            w.clamp_(-1, 1)
    """,
    "parameter initialisation": """
        import torch
        from torch import nn
        model = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 1))
        for module in model.modules():
            if isinstance(module, nn.Linear):
                nn.init.xavier_uniform_(module.weight)
                nn.init.zeros_(module.bias)
        model[0].weight.data.mul_(0.5)
        model(torch.randn(2, 4)).sum().backward()
    """,
    "in-place relu on a fresh tensor": """
        import torch
        import torch.nn.functional as F
        x = torch.randn(4, requires_grad=True)
        y = x * 2
        y = F.relu(y, inplace=True)
        z = y + 1
        z.add_(1)
        z[0] = 0.0
        z.sum().backward()
    """,
    "residual block with in-place add after a conv": """
        import torch
        from torch import nn
        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv1 = nn.Conv2d(4, 4, 3, padding=1)
                self.bn1 = nn.BatchNorm2d(4)
                self.relu = nn.ReLU(inplace=True)
                self.conv2 = nn.Conv2d(4, 4, 3, padding=1)
                self.bn2 = nn.BatchNorm2d(4)
            def forward(self, x):
                identity = x
                out = self.relu(self.bn1(self.conv1(x)))
                out = self.bn2(self.conv2(out))
                out += identity
                return self.relu(out)
        block = Block()
        block(torch.randn(2, 4, 8, 8)).mean().backward()
    """,
    "gan with detach and two optimizers": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        G = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 2))
        D = nn.Sequential(nn.Linear(2, 8), nn.LeakyReLU(0.2, inplace=True), nn.Linear(8, 1))
        opt_G = torch.optim.Adam(G.parameters(), lr=1e-3)
        opt_D = torch.optim.Adam(D.parameters(), lr=1e-3)
        bce = nn.BCEWithLogitsLoss()
        for _ in range(3):
            real, z = torch.randn(8, 2), torch.randn(8, 2)
            fake = G(z)
            opt_D.zero_grad()
            d_loss = bce(D(real), torch.ones(8, 1)) + bce(D(fake.detach()), torch.zeros(8, 1))
            d_loss.backward()
            opt_D.step()
            opt_G.zero_grad()
            g_loss = bce(D(fake), torch.ones(8, 1))
            g_loss.backward()
            opt_G.step()
    """,
    "preallocated buffer rewritten every step": """
        import torch
        buffer = torch.zeros(4)
        w = torch.randn(4, requires_grad=True)
        for step in range(3):
            buffer.copy_(torch.randn(4))
            loss = (w * buffer).sum()
            loss.backward()
    """,
}


@pytest.mark.parametrize("name", sorted(CORRECT_PROGRAMS))
def test_correct_program_gets_no_diagnosis(tmp_path, name):
    outcome = run_program(tmp_path, CORRECT_PROGRAMS[name])
    assert outcome.error is None, outcome.error
    assert outcome.diagnoses == []
    assert outcome.warnings == []


@pytest.mark.parametrize("name", sorted(CORRECT_PROGRAMS))
def test_correct_program_silent_in_strict_mode(tmp_path, name):
    outcome = run_program(tmp_path, CORRECT_PROGRAMS[name], strict=True)
    assert outcome.error is None, outcome.error
    assert outcome.diagnoses == []


def test_wrappers_removed_after_watch():
    original_setitem = torch.Tensor.__setitem__
    original_add_ = torch.Tensor.add_
    original_relu_ = torch.relu_
    import autograd_doctor

    with autograd_doctor.watch():
        assert torch.Tensor.add_ is not original_add_
    assert torch.Tensor.__setitem__ is original_setitem
    assert torch.Tensor.add_ is original_add_
    assert torch.relu_ is original_relu_
    assert "__setitem__" not in torch.Tensor.__dict__ or torch.Tensor.__dict__["__setitem__"] is original_setitem
