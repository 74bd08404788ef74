"""AD307 for an object whose class's `__call__` is decorated with `@torch.no_grad()` (a diffusion
pipeline called on latents that are optimised): the image it returns has no history and the
loss's backward() raises. Held-out set 22 (diffusers#529, optimising the starting noise through
`pipe(latents=...)`) got only AD301's "check the function called here"; the doctor now matches the
called object's `__call__` with the decorator it recorded, as it does a module's `forward`, names
the decorator line and deletes it (in the user's files; in an installed library it stays advice).
The help applied gives the values of the maintainer's answer, calling `__call__.__wrapped__`."""

import torch

from helpers import apply_help, run_as_script, run_plain, run_program

PIPELINE = """
import torch
import torch.nn as nn
import torch.nn.functional as F
torch.manual_seed(0)

class Pipeline:
    def __init__(self, unet):
        self.unet = unet

    @torch.no_grad()  # DECORATOR
    def __call__(self, latents):
        for t in range(3):
            latents = latents - 0.3 * self.unet(latents)
        return torch.sigmoid(latents)

unet = nn.Linear(4, 4)
unet.requires_grad_(False)
pipe = Pipeline(unet)
noise = nn.Parameter(torch.randn(2, 4))
optimizer = torch.optim.Adam([noise], lr=0.05)
for step in range(3):
    optimizer.zero_grad()
    image = pipe(latents=noise)  # CALL
    loss = image.pow(2).mean()
    loss.backward()  # BACKWARD
    optimizer.step()
final = noise.detach().clone()
"""

ANSWER = PIPELINE.replace("image = pipe(latents=noise)  # CALL", "image = Pipeline.__call__.__wrapped__(pipe, latents=noise)")


def test_the_decorator_of_the_called_object_is_named(tmp_path):
    outcome = run_as_script(tmp_path, PIPELINE)
    assert outcome.error is not None
    diagnosis = next(d for d in outcome.diagnoses if d.code == "AD307")
    assert diagnosis.primary.line == outcome.line("DECORATOR")
    assert any(loc.line == outcome.line("BACKWARD") for loc in diagnosis.related)
    assert "__call__()" in diagnosis.notes[0]
    assert diagnosis.help[0].replacement.strip() == "def __call__(self, latents):"


def test_the_help_applied_gives_the_answers_values(tmp_path):
    outcome = run_as_script(tmp_path, PIPELINE)
    outcome.diagnoses[:] = [d for d in outcome.diagnoses if d.code == "AD307"]
    fixed = run_plain(tmp_path, apply_help(outcome, 0), name="fixed.py")["final"]
    answer = run_plain(tmp_path, ANSWER, name="answer.py")["final"]
    assert torch.equal(fixed, answer)


def test_silent_when_the_undecorated_function_is_called(tmp_path):
    outcome = run_program(tmp_path, ANSWER)
    assert outcome.error is None and not outcome.diagnoses


def test_an_object_called_only_for_evaluation_is_not_blamed(tmp_path):
    # The pipeline makes a preview under no_grad; the loss comes from another path that is cut by
    # a detach(): AD307 must not name the pipeline's decorator.
    evaluation = PIPELINE.replace("    image = pipe(latents=noise)  # CALL\n    loss = image.pow(2).mean()\n",
                                  "    preview = pipe(latents=noise)\n    loss = noise.detach().pow(2).mean()\n")
    outcome = run_as_script(tmp_path, evaluation)
    assert outcome.error is not None
    assert not any(d.code == "AD307" for d in outcome.diagnoses)
