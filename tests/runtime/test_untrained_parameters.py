"""AD213 on correct programs: parameters that get gradients and are in no optimizer on purpose
(a teacher or target network called on the data, a network in eval mode, inputs that require
grad), or that are updated another way (their own optimizer, a hand-written update through
`.data`), are not reported. The buggy programs with their helps are in tests/silent."""

from __future__ import annotations

import textwrap

import pytest

from helpers import grads_equal, run_plain, run_program

CORRECT = {
    # Distillation without no_grad around the teacher: the teacher gets gradients, never trains.
    "a teacher called on the data, its gradients unused": """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        torch.manual_seed(0)
        teacher, student = nn.Linear(4, 3), nn.Linear(4, 3)
        optimizer = torch.optim.SGD(student.parameters(), lr=0.1)
        for _ in range(3):
            x = torch.randn(8, 4)
            loss = F.kl_div(F.log_softmax(student(x), 1), F.softmax(teacher(x), 1), reduction="batchmean")
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        grads = [p.grad for p in [*student.parameters(), *teacher.parameters()]]
    """,
    # DQN whose target values are not detached: the target network gets gradients.
    "a target network called on the next states": """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        policy_net, target_net = nn.Linear(4, 2), nn.Linear(4, 2)
        target_net.load_state_dict(policy_net.state_dict())
        optimizer = torch.optim.Adam(policy_net.parameters(), lr=1e-3)
        for _ in range(3):
            states, next_states = torch.randn(8, 4), torch.randn(8, 4)
            q = policy_net(states).max(1).values
            expected = 1.0 + 0.99 * target_net(next_states).max(1).values
            loss = (q - expected).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        grads = [p.grad for p in policy_net.parameters()]
    """,
    # A perceptual loss through a fixed network in eval mode, its parameters not frozen.
    "a fixed network in eval mode applied to the model's output": """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        generator = nn.Linear(4, 4)
        features = nn.Sequential(nn.Linear(4, 6), nn.ReLU()).eval()
        optimizer = torch.optim.SGD(generator.parameters(), lr=0.1)
        for _ in range(3):
            fake, real = generator(torch.randn(5, 4)), torch.randn(5, 4)
            loss = (features(fake) - features(real)).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        grads = [p.grad for p in generator.parameters()]
    """,
    # The center loss with an optimizer of its own, as pytorch-center-loss does.
    "a center loss with its own optimizer": """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        torch.manual_seed(0)

        class CenterLoss(nn.Module):
            def __init__(self):
                super().__init__()
                self.centers = nn.Parameter(torch.randn(3, 3))

            def forward(self, features, labels):
                return (features - self.centers[labels]).pow(2).sum(1).mean()

        model, criterion_cent = nn.Linear(4, 3), CenterLoss()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        optimizer_centloss = torch.optim.SGD(criterion_cent.parameters(), lr=0.5)
        for _ in range(3):
            x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))
            features = model(x)
            loss = F.cross_entropy(features, y) + 0.1 * criterion_cent(features, y)
            optimizer.zero_grad()
            optimizer_centloss.zero_grad()
            loss.backward()
            optimizer.step()
            optimizer_centloss.step()
        grads = [p.grad for p in [*model.parameters(), *criterion_cent.parameters()]]
    """,
    # The centers moved by a hand-written update through .data (the version counter misses it).
    "centers updated by hand through .data": """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        model = nn.Linear(4, 3)
        centers = nn.Parameter(torch.randn(3, 3))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(3):
            x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))
            features = model(x)
            loss = (features - centers[y]).pow(2).sum(1).mean()
            optimizer.zero_grad()
            centers.grad = None
            loss.backward()
            optimizer.step()
            centers.data -= 0.5 * centers.grad
        grads = [p.grad for p in [*model.parameters(), centers]]
    """,
    # Physics-informed: collocation points that require grad for derivatives, never trained.
    "collocation points that require grad": """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        net = nn.Sequential(nn.Linear(1, 8), nn.Tanh(), nn.Linear(8, 1))
        points = torch.linspace(0, 1, 16).unsqueeze(1).requires_grad_()
        optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
        for _ in range(3):
            u = net(points)
            du = torch.autograd.grad(u.sum(), points, create_graph=True)[0]
            loss = (du - torch.cos(points)).pow(2).mean() + net(torch.zeros(1, 1)).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        grads = [p.grad for p in net.parameters()]
    """,
}


@pytest.mark.parametrize("mode", ["light", "full"])
@pytest.mark.parametrize("name", sorted(CORRECT))
def test_correct_programs_are_not_reported(tmp_path, name, mode):
    source = CORRECT[name]
    outcome = run_program(tmp_path, source, mode=mode)
    assert outcome.error is None
    assert not outcome.diagnoses, [str(d) for d in outcome.diagnoses]
    assert grads_equal(outcome.namespace["grads"], run_plain(tmp_path, textwrap.dedent(source))["grads"])


def test_a_parameter_beside_the_model_is_reported_at_the_second_step_only(tmp_path):
    """One step is not enough to know that nothing updates it: the warning comes at the second."""
    source = """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        model = nn.Linear(4, 1)
        scale = nn.Parameter(torch.ones(1))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)  # BUILT
        for step in range(STEPS):
            loss = (scale * model(torch.randn(6, 4))).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    """
    assert not run_program(tmp_path, source.replace("STEPS", "1")).diagnoses
    outcome = run_program(tmp_path, source.replace("STEPS", "2"))
    (diagnosis,) = outcome.diagnoses
    assert diagnosis.code == "AD213" and diagnosis.primary.line == outcome.line("BUILT")
    assert diagnosis.help[0].replacement == ("optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
                                             'optimizer.add_param_group({"params": [scale]})')


def test_a_parameter_made_after_the_optimizer_gets_its_group_after_it_is_made(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        model = nn.Linear(4, 2)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        temperature = nn.Parameter(torch.ones(1))  # MADE
        for _ in range(2):
            loss = (model(torch.randn(6, 4)) / temperature).logsumexp(1).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    """)
    (diagnosis,) = outcome.diagnoses
    assert diagnosis.code == "AD213"
    assert diagnosis.help[0].location.line == outcome.line("MADE")
    assert diagnosis.help[0].replacement == ("temperature = nn.Parameter(torch.ones(1))\n"
                                             'optimizer.add_param_group({"params": [temperature]})')


def test_a_network_of_library_layers_beside_the_model_is_not_reported(tmp_path):
    """A discriminator or reward model used without its optimizer may be fixed on purpose."""
    outcome = run_program(tmp_path, """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        generator = nn.Linear(4, 4)
        critic = nn.Sequential(nn.Linear(4, 1), nn.Sigmoid())
        optimizer = torch.optim.SGD(generator.parameters(), lr=0.1)
        for _ in range(2):
            fake = generator(torch.randn(6, 4))
            loss = -critic(fake).log().mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    """)
    assert not outcome.diagnoses
