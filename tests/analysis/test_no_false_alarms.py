"""Ordinary, correct programs: the gradient-path analysis must stay quiet."""

import pytest

from helpers import run_program

PROGRAMS = {
    "training_loop": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
        opt = torch.optim.Adam(model.parameters(), lr=1e-2)
        for _ in range(6):
            opt.zero_grad()
            loss = (model(torch.randn(8, 4)) - 1).pow(2).mean()
            loss.backward()
            opt.step()
    """,
    "batchnorm_and_init_through_data": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 1))
        model[0].weight.data.normal_(0, 0.1)
        model[0].bias.data.zero_()
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        for _ in range(5):
            opt.zero_grad()
            model(torch.randn(16, 4)).pow(2).mean().backward()
            opt.step()
        with torch.no_grad():
            for p in model.parameters():
                p.mul_(0.5)
                p.clamp_(-1, 1)
    """,
    "residual_blocks": """
        import torch
        from torch import nn
        torch.manual_seed(0)

        class Block(nn.Module):
            def __init__(self, c):
                super().__init__()
                self.conv1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
                self.bn1 = nn.BatchNorm2d(c)
                self.relu = nn.ReLU(inplace=True)
                self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
                self.bn2 = nn.BatchNorm2d(c)

            def forward(self, x):
                identity = x
                out = self.relu(self.bn1(self.conv1(x)))
                out = self.bn2(self.conv2(out))
                out += identity
                return self.relu(out)

        net = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), Block(4), Block(4), nn.AdaptiveAvgPool2d(1),
                            nn.Flatten(), nn.Linear(4, 2))
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        for _ in range(3):
            opt.zero_grad()
            nn.functional.cross_entropy(net(torch.randn(2, 3, 8, 8)), torch.tensor([0, 1])).backward()
            opt.step()
    """,
    "frozen_backbone_and_unused_head": """
        import torch
        from torch import nn
        torch.manual_seed(0)

        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.backbone = nn.Linear(4, 8)
                self.head = nn.Linear(8, 1)
                self.unused_head = nn.Linear(8, 3)

            def forward(self, x):
                return self.head(self.backbone(x))

        model = Model()
        model.backbone.requires_grad_(False)
        opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.1)
        for _ in range(5):
            opt.zero_grad()
            model(torch.randn(4, 4)).pow(2).mean().backward()
            opt.step()
    """,
    "gan_with_detach": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        G = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 2))
        D = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1))
        opt_g = torch.optim.Adam(G.parameters(), 1e-3)
        opt_d = torch.optim.Adam(D.parameters(), 1e-3)
        bce = nn.BCEWithLogitsLoss()
        for _ in range(4):
            real = torch.randn(8, 2)
            fake = G(torch.randn(8, 2))
            opt_d.zero_grad()
            d_loss = bce(D(real), torch.ones(8, 1)) + bce(D(fake.detach()), torch.zeros(8, 1))
            d_loss.backward()
            opt_d.step()
            opt_g.zero_grad()
            g_loss = bce(D(fake), torch.ones(8, 1))
            g_loss.backward()
            opt_g.step()
    """,
    "truncated_bptt_done_right": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        rnn = nn.RNN(3, 5, batch_first=True)
        head = nn.Linear(5, 1)
        opt = torch.optim.SGD(list(rnn.parameters()) + list(head.parameters()), lr=0.1)
        data = torch.randn(2, 12, 3)
        h = torch.zeros(1, 2, 5)
        for chunk in data.split(4, dim=1):
            h = h.detach()
            opt.zero_grad()
            out, h = rnn(chunk, h)
            loss = head(out).pow(2).mean()
            loss.backward()
            opt.step()
    """,
    "two_heads_two_backwards": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        trunk = nn.Linear(4, 8)
        heads = nn.ModuleDict({"a": nn.Linear(8, 1), "b": nn.Linear(8, 1)})
        model = nn.ModuleDict({"trunk": trunk, "heads": heads})
        for _ in range(3):
            model.zero_grad()
            z = trunk(torch.randn(4, 4))
            out_a, out_b = heads["a"](z), heads["b"](z)
            out_a.mean().backward(retain_graph=True)
            out_b.mean().backward()
    """,
    "autograd_grad_on_some_parameters": """
        import torch
        from torch import nn
        model = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 1))
        loss = model(torch.randn(2, 4)).sum()
        grads = torch.autograd.grad(loss, [model[1].weight])
    """,
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_no_diagnosis_for_correct_program(tmp_path, name):
    outcome = run_program(tmp_path, PROGRAMS[name])
    assert outcome.error is None, outcome.error
    assert outcome.diagnoses == []
    assert outcome.warnings == []
