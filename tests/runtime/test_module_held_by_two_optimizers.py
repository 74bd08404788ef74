"""AD103 when the parameter an optimizer's step() changed is held by a second optimizer too: one
module shared by two models, each optimizer built from all of its model's parameters. Held-out
set 23 (stable-baselines3 PR #198, SAC's shared features extractor): the help that moved the
actor's forward after the critic's step ran but trained something else. The report now names the
shared module and both optimizers, points at the statement that gives the stepping optimizer the
module, and offers keeping it in one optimizer first (advice: which loss trains it is the user's
choice). Here: an encoder shared by a classifier and a decoder (the optimizer given a list built
the line before), and an embedding shared through parameter groups (the optimizer's own line; a Linear after it, whose weight the graph saves).
Silent: the same programs with the shared module in one optimizer."""

import torch

from helpers import marked_line, run_plain, run_program

ENCODER = """
import torch
import torch.nn as nn

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 8), nn.Tanh())
classifier = nn.Sequential(encoder, nn.Linear(8, 3))
autoencoder = nn.Sequential(encoder, nn.Linear(8, 6))
classifier_parameters = list(classifier.parameters())  # GIVEN
classifier_optimizer = torch.optim.SGD(classifier_parameters, lr=0.1)
autoencoder_optimizer = torch.optim.SGD(autoencoder.parameters(), lr=0.1)
for step in range(3):
    x, y = torch.randn(5, 6), torch.randint(0, 3, (5,))
    reconstruction = autoencoder(x)
    classifier_optimizer.zero_grad()
    torch.nn.functional.cross_entropy(classifier(x), y).backward()
    classifier_optimizer.step()
    autoencoder_optimizer.zero_grad()
    (reconstruction - x).pow(2).mean().backward()
    autoencoder_optimizer.step()
"""


def test_an_encoder_shared_by_two_models_each_optimizer_holding_it(tmp_path):
    outcome = run_program(tmp_path, ENCODER)
    assert outcome.error is not None
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD103"
    assert diagnosis.primary.line == marked_line(ENCODER, "GIVEN")
    assert any("parameters of encoder are held by 2 optimizers (" in n and "classifier_optimizer" in n
               and "autoencoder_optimizer" in n for n in diagnosis.notes)
    assert diagnosis.help[0].replacement is None
    assert diagnosis.help[0].message.startswith("keep encoder in one optimizer only")
    # the advice followed: the encoder in the autoencoder's optimizer only, read under no_grad by the classifier
    fixed = ENCODER.replace("classifier_parameters = list(classifier.parameters())",
                            "classifier_parameters = list(classifier[1].parameters())").replace(
        "torch.nn.functional.cross_entropy(classifier(x), y)",
        "torch.nn.functional.cross_entropy(classifier[1](encoder(x).detach()), y)")
    run_plain(tmp_path, fixed)
    assert run_program(tmp_path, fixed, name="fixed_program.py").diagnoses == []


EMBEDDING = """
import torch
import torch.nn as nn

torch.manual_seed(0)
embedding = nn.Sequential(nn.Embedding(10, 4), nn.Linear(4, 4))
head_a, head_b = nn.Linear(4, 1), nn.Linear(4, 1)
optimizer_a = torch.optim.Adam([{"params": embedding.parameters()}, {"params": head_a.parameters()}])  # GIVEN
optimizer_b = torch.optim.Adam([{"params": embedding.parameters(), "lr": 1e-4}, {"params": head_b.parameters()}])
tokens = torch.randint(0, 10, (8,))
loss_b = head_b(embedding(tokens)).pow(2).mean()
optimizer_a.zero_grad()
head_a(embedding(tokens)).mean().backward()
optimizer_a.step()
optimizer_b.zero_grad()
loss_b.backward()
optimizer_b.step()
"""


def test_an_embedding_shared_through_parameter_groups(tmp_path):
    outcome = run_program(tmp_path, EMBEDDING)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD103"
    assert diagnosis.primary.line == marked_line(EMBEDDING, "GIVEN")
    assert any("parameters of embedding are held by 2 optimizers" in n for n in diagnosis.notes)
    assert diagnosis.help[0].replacement is None


def test_the_shared_module_in_one_optimizer_stays_silent(tmp_path):
    source = EMBEDDING.replace('[{"params": embedding.parameters(), "lr": 1e-4}, {"params": head_b.parameters()}]',
                               "head_b.parameters()").replace("head_b(embedding(tokens))",
                                                              "head_b(embedding(tokens).detach())")
    outcome = run_program(tmp_path, source)
    assert outcome.error is None
    assert outcome.diagnoses == []
