"""AD177: a gradient clip between a backward() and a step() covers only parameters that the step
does not update and that backward() did not reach.

The clip rescales gradients left from an earlier backward() (another loss, another model), and the
gradients the step applies are not clipped at all. Reported at the line that chose what to clip: the
clip itself, or the call that passed a model into a helper that clips it. The help is advice (which
parameters to clip, all of the optimizer's or one layer's, is the program's choice); applying it as
the hand-written reference does gives that reference's parameters. Found on set 15's OpenSpiel
agent (https://github.com/google-deepmind/open_spiel/issues/827); these programs are other shapes.
"""

import torch

from helpers import run_plain, run_program

# A world model and a controller trained by one step function each; the controller's update clips
# the world model's gradients, which its loss does not reach.
CONTROLLER = """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    torch.manual_seed(0)
    world_model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 4))
    controller = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
    model_optimizer = torch.optim.SGD(world_model.parameters(), lr=0.1)
    controller_optimizer = torch.optim.SGD(controller.parameters(), lr=0.5)
    states, next_states = torch.randn(32, 4), torch.randn(32, 4)
    targets = torch.randn(32, 2) * 5.0

    for iteration in range(4):
        model_optimizer.zero_grad()
        F.mse_loss(world_model(states), next_states).backward()
        torch.nn.utils.clip_grad_norm_(world_model.parameters(), 0.5)
        model_optimizer.step()

        controller_optimizer.zero_grad()
        F.mse_loss(controller(states), targets).backward()
        torch.nn.utils.clip_grad_norm_(world_model.parameters(), 0.5)  # PRIMARY
        controller_optimizer.step()
    result = [p.detach().clone() for p in [*world_model.parameters(), *controller.parameters()]]
"""

CONTROLLER_REFERENCE = CONTROLLER.replace(
    "torch.nn.utils.clip_grad_norm_(world_model.parameters(), 0.5)  # PRIMARY",
    "torch.nn.utils.clip_grad_norm_(controller.parameters(), 0.5)  # PRIMARY")

# A speaker-verification trainer whose helper clears, backpropagates, clips the module it is given
# and steps; the classifier's update passes the embedding network's projection instead of itself.
TRAINER = """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    torch.manual_seed(2)


    class Trainer:
        def __init__(self):
            self.embedder = nn.Sequential(nn.Linear(20, 32), nn.Tanh())
            self.projection = nn.Linear(32, 8)
            self.classifier = nn.Linear(32, 5)
            self.embed_optimizer = torch.optim.Adam(
                [*self.embedder.parameters(), *self.projection.parameters()], lr=1e-2)
            self.class_optimizer = torch.optim.Adam(self.classifier.parameters(), lr=1e-2)

        def update(self, module, optimizer, loss):
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_value_(module.parameters(), 0.01)
            optimizer.step()

        def train_step(self, features, labels, anchors):
            embedded = self.embedder(features)
            contrastive = F.mse_loss(self.projection(embedded), anchors)
            self.update(self.projection, self.embed_optimizer, contrastive)
            logits = self.classifier(embedded.detach())
            self.update(self.projection, self.class_optimizer, F.cross_entropy(logits, labels))  # PRIMARY


    trainer = Trainer()
    features, labels, anchors = torch.randn(24, 20), torch.randint(0, 5, (24,)), torch.randn(24, 8)
    for step in range(4):
        trainer.train_step(features, labels, anchors)
    result = [p.detach().clone() for p in trainer.classifier.parameters()]
"""

TRAINER_REFERENCE = TRAINER.replace(
    "self.update(self.projection, self.class_optimizer, F.cross_entropy(logits, labels))  # PRIMARY",
    "self.update(self.classifier, self.class_optimizer, F.cross_entropy(logits, labels))  # PRIMARY")


def _close(first, second) -> bool:
    return len(first) == len(second) and all(torch.allclose(a, b, rtol=1e-5, atol=1e-6) for a, b in zip(first, second))


def _the_diagnosis(outcome):
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD177"]
    return diagnosis


def test_a_clip_of_the_other_model_before_the_step_is_reported_at_the_clip(tmp_path):
    outcome = run_program(tmp_path, CONTROLLER)
    assert outcome.error is None
    diagnosis = _the_diagnosis(outcome)
    assert diagnosis.severity == "warning"
    assert diagnosis.primary.line == outcome.line("PRIMARY")
    assert diagnosis.help[0].replacement is None
    assert "controller_optimizer" in diagnosis.help[0].message
    assert len(outcome.warnings) == 1


def test_a_helper_given_the_wrong_module_is_reported_at_the_call_that_passes_it(tmp_path):
    outcome = run_program(tmp_path, TRAINER)
    assert outcome.error is None
    diagnosis = _the_diagnosis(outcome)
    assert diagnosis.primary.line == outcome.line("PRIMARY")
    assert "self.projection" in diagnosis.primary.note
    assert diagnosis.help[0].replacement is None


def test_the_advice_applied_gives_the_references_parameters(tmp_path):
    for buggy, reference in ((CONTROLLER, CONTROLLER_REFERENCE), (TRAINER, TRAINER_REFERENCE)):
        expected = run_plain(tmp_path, reference, "reference.py")["result"]
        assert not _close(run_plain(tmp_path, buggy, "buggy.py")["result"], expected)  # the bug changes training
        outcome = run_program(tmp_path, reference, "fixed.py")
        assert outcome.error is None and not outcome.diagnoses
        assert _close(outcome.namespace["result"], expected)


def test_clipping_one_model_then_stepping_two_optimizers_is_silent(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        torch.manual_seed(0)
        encoder, head = nn.Linear(4, 8), nn.Linear(8, 2)
        encoder_optimizer = torch.optim.SGD(encoder.parameters(), lr=0.1)
        head_optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
        x, y = torch.randn(16, 4), torch.randn(16, 2)
        for step in range(5):
            encoder_optimizer.zero_grad()
            head_optimizer.zero_grad()
            F.mse_loss(head(encoder(x)), y).backward()
            torch.nn.utils.clip_grad_norm_(encoder.parameters(), 0.1)
            head_optimizer.step()
            encoder_optimizer.step()
    """)
    assert outcome.error is None and not outcome.diagnoses
