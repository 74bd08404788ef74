"""AD249: an optimizer built from a wrapper's parameters() (an explainer's masks, an adversarial
patch) that also steps the trained model the wrapper holds in eval mode (dmlc/dgl#3944). Named at
the construction; the help, applied, gives the masks-only optimizer of the accepted fix. A wrapper
optimizer over its own parameters, a model fine-tuned by a second optimizer and a wrapper trained
jointly with a model in train mode are not reported."""

from __future__ import annotations

import textwrap

import torch

from helpers import apply_help, run_plain, run_program

EXPLAINER = """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    torch.manual_seed(0)


    class Explainer(nn.Module):
        def __init__(self, model, n):
            super().__init__()
            self.model = model
            self.edge_mask = nn.Parameter(torch.randn(n, n) * 0.1)

        def forward(self, adj, x):
            return self.model(adj * torch.sigmoid(self.edge_mask) @ x)


    model = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 2))
    adj, x, y = torch.rand(6, 6), torch.randn(6, 3), torch.randint(0, 2, (6,))
    model_optim = torch.optim.Adam(model.parameters(), lr=0.05)
    for _ in range(3):
        loss = F.cross_entropy(model(adj @ x), y)
        model_optim.zero_grad()
        loss.backward()
        model_optim.step()
    model.eval()
    explainer = Explainer(model, 6)
    optim = torch.optim.Adam(explainer.parameters(), lr=0.05)  # BUILT
    for _ in range(4):
        loss = -F.log_softmax(explainer(adj, x)[0], -1)[1] + 0.01 * torch.sigmoid(explainer.edge_mask).sum()
        optim.zero_grad()
        loss.backward()
        optim.step()
    result = [explainer.edge_mask.detach().clone()] + [p.detach().clone() for p in model.parameters()]
"""
MASKS_ONLY = EXPLAINER.replace("torch.optim.Adam(explainer.parameters(), lr=0.05)",
                               "torch.optim.Adam([explainer.edge_mask], lr=0.05)")


def _equal(a, b) -> bool:
    return len(a) == len(b) and all(torch.equal(x, y) for x, y in zip(a, b))


def _probed(outcome):
    return [d for d in outcome.diagnoses if d.code == "AD249"]


def test_the_explainer_optimizer_is_named_and_the_help_keeps_the_model_fixed(tmp_path):
    outcome = run_program(tmp_path, EXPLAINER)
    (diagnosis,) = _probed(outcome)
    assert diagnosis.primary.line == outcome.line("BUILT")
    assert diagnosis.help[0].replacement == "optim = torch.optim.Adam([explainer.edge_mask], lr=0.05)"
    fixed = run_plain(tmp_path, apply_help(outcome))
    correct = run_plain(tmp_path, textwrap.dedent(MASKS_ONLY), name="correct.py")
    assert _equal(fixed["result"], correct["result"])
    assert not _equal(outcome.namespace["result"], correct["result"])  # what it is about


def test_the_masks_only_optimizer_is_not_reported(tmp_path):
    outcome = run_program(tmp_path, MASKS_ONLY)
    assert outcome.error is None and not _probed(outcome)


def test_an_adversarial_patch_around_a_classifier(tmp_path):
    """Another shape: a patch attack module holding a trained classifier; the help lists the patch."""
    outcome = run_program(tmp_path, """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        classifier = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 3))
        opt = torch.optim.SGD(classifier.parameters(), lr=0.1)
        data, labels = torch.randn(8, 4), torch.randint(0, 3, (8,))
        for _ in range(2):
            opt.zero_grad()
            nn.functional.cross_entropy(classifier(data), labels).backward()
            opt.step()
        classifier.eval()


        class PatchAttack(nn.Module):
            def __init__(self, target_model):
                super().__init__()
                self.target_model = target_model
                self.patch = nn.Parameter(torch.zeros(4))

            def forward(self, x):
                return self.target_model(x + self.patch)


        attack = PatchAttack(classifier)
        attack_opt = torch.optim.SGD(attack.parameters(), lr=0.1)  # BUILT
        for _ in range(2):
            attack_opt.zero_grad()
            (-nn.functional.cross_entropy(attack(data), labels)).backward()
            attack_opt.step()
    """)
    (diagnosis,) = _probed(outcome)
    assert diagnosis.primary.line == outcome.line("BUILT")
    assert diagnosis.help[0].replacement.startswith("attack_opt = torch.optim.SGD([attack.patch], lr=0.1)")


def test_fine_tuning_and_joint_training_are_not_reported(tmp_path):
    fine_tuned = run_program(tmp_path, """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.1), nn.Linear(3, 1))
        first = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(2):
            first.zero_grad()
            model(torch.randn(4, 3)).pow(2).mean().backward()
            first.step()
        model.eval()
        second = torch.optim.Adam(model.parameters(), lr=0.01)
        for _ in range(2):
            second.zero_grad()
            model(torch.randn(4, 3)).pow(2).mean().backward()
            second.step()
    """)
    assert fine_tuned.error is None and not _probed(fine_tuned)
    joint = run_program(tmp_path, EXPLAINER.replace("model.eval()", "model.train()"), name="joint.py")
    assert joint.error is None and not _probed(joint)
