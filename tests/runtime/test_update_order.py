"""Two losses, two updates, one failure: the helps name the line to change and write both intents.

AD103: an optimizer's step() ran between another loss's backward() and this one, and this loss's
graph saved the weights it changed. Whether this loss meant the weights its forward pass used
(do its update first) or the updated ones (compute it again after the step) is not a run-time
fact, so both changes are offered, each saying what it changes; applied, each computes what a
hand-written program with that intent computes.

AD302: a value carried into a later loss with a graph an earlier backward() freed: the line
that carries it (or, for a value computed once and kept, the line that computes it) is named
and changed.
"""

import torch

from helpers import apply_help, run_plain, run_program

ACTOR_CRITIC = """
    import torch
    from torch import nn
    torch.manual_seed(0)
    actor = nn.Linear(3, 1)
    critic = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
    actor_opt = torch.optim.SGD(actor.parameters(), lr=0.1)
    critic_opt = torch.optim.SGD(critic.parameters(), lr=0.1)
    states, taken, target = torch.randn(5, 3), torch.randn(5, 1), torch.randn(5, 1)

    actor_loss = -critic(torch.cat([states, actor(states)], dim=1)).mean()  # FORWARD
    critic_loss = (critic(torch.cat([states, taken], dim=1)) - target).pow(2).mean()
{updates}
    params = [p.detach() for p in [*actor.parameters(), *critic.parameters()]]
"""

CRITIC_FIRST = """
    critic_opt.zero_grad()
    critic_loss.backward()
    critic_opt.step()  # STEP
    actor_opt.zero_grad()
    actor_loss.backward()  # BACKWARD
    actor_opt.step()
"""

ACTOR_FIRST = """
    actor_opt.zero_grad()
    actor_loss.backward()
    actor_opt.step()
    critic_opt.zero_grad()
    critic_loss.backward()
    critic_opt.step()
"""

ACTOR_THROUGH_UPDATED_CRITIC = """
    critic_opt.zero_grad()
    critic_loss.backward()
    critic_opt.step()
    actor_loss = -critic(torch.cat([states, actor(states)], dim=1)).mean()
    actor_opt.zero_grad()
    actor_loss.backward()
    actor_opt.step()
"""


def _program(template: str, updates: str) -> str:
    return template.replace("{updates}", updates.strip("\n"))


def _same_params(tmp_path, outcome, index: int, reference: str) -> bool:
    fixed = run_plain(tmp_path, apply_help(outcome, index), f"fixed_{index}.py")
    correct = run_plain(tmp_path, reference, f"reference_{index}.py")
    return all(torch.allclose(a, b, rtol=1e-6, atol=1e-7) for a, b in zip(fixed["params"], correct["params"]))


def test_the_later_update_moves_before_the_step_and_the_forward_is_shown(tmp_path):
    for mode in ({}, {"mode": "full"}):
        outcome = run_program(tmp_path, _program(ACTOR_CRITIC, CRITIC_FIRST), **mode)
        diagnosis = outcome.diagnosis
        assert diagnosis.code == "AD103"
        # The line the first help moves: the actor's update, which must run before the step.
        assert diagnosis.primary.line == outcome.line("BACKWARD")
        # The forward line (in the full mode it is also the save's line, shown once, as the save).
        shown = {(loc.role, loc.line) for loc in diagnosis.related}
        assert {("forward", outcome.line("FORWARD")), ("saved", outcome.line("FORWARD"))} & shown
        assert ("modified", outcome.line("STEP")) in shown
        first, second = diagnosis.help[:2]
        assert first.message.startswith("if actor_loss is meant to go through the weights its forward pass used")
        assert "every value computed stays the same" in first.message and "unverified" in first.message
        assert second.message.startswith("or, if actor_loss is meant to go through the updated weights")
        assert "its value then differs" in second.message
        # Applied, each help computes what the program written with its intent computes.
        assert _same_params(tmp_path, outcome, 0, _program(ACTOR_CRITIC, ACTOR_FIRST))
        assert _same_params(tmp_path, outcome, 1, _program(ACTOR_CRITIC, ACTOR_THROUGH_UPDATED_CRITIC))


# One forward pass, two losses, one optimizer that steps after each backward().
ONE_MODEL = """
    import torch
    from torch import nn
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    inputs, target = torch.randn(5, 4), torch.randn(5, 2)
    out = model(inputs)  # FORWARD
    fit = (out - target).pow(2).mean()
    smooth = out.diff(dim=0).abs().mean()
    opt.zero_grad()
    fit.backward(retain_graph=True)
    opt.step()  # STEP
    smooth.backward()
{tail}
    params = [p.detach() for p in model.parameters()]
"""


def test_a_step_the_same_optimizer_repeats_is_dropped_and_both_losses_step_once(tmp_path):
    outcome = run_program(tmp_path, ONE_MODEL.replace("{tail}", "    opt.step()"))
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD103" and diagnosis.primary.line == outcome.line("STEP")
    assert [loc.line for loc in diagnosis.related if loc.role == "forward"] == [outcome.line("FORWARD")]
    first = diagnosis.help[0]
    assert first.message.startswith("if one update from both losses is meant: remove this opt.step()")
    assert first.location.line == outcome.line("STEP")
    summed = ONE_MODEL.replace("{tail}", "").replace("    fit.backward(retain_graph=True)\n    opt.step()  # STEP\n"
                                                    "    smooth.backward()\n", "    (fit + smooth).backward()\n"
                                                    "    opt.step()\n")
    assert _same_params(tmp_path, outcome, 0, summed)
    # The other intent: the second loss through the updated weights.
    assert diagnosis.help[1].replacement == "opt.step()\nout = model(inputs)\nsmooth = out.diff(dim=0).abs().mean()"


def test_moving_the_step_says_it_trains_the_stepped_model_on_both_losses(tmp_path):
    outcome = run_program(tmp_path, ONE_MODEL.replace("{tail}", ""))
    first = outcome.diagnosis.help[0]
    assert first.message.startswith("call opt.step() after smooth.backward()")
    assert "it trains them on fit + smooth" in first.message
    assert first.replacement == "smooth.backward()\nopt.step()"


# A GAN whose two losses share the discriminator's output: moving G's update first would free
# the graph D's loss needs, so that help is not offered; moving D's step after G's backward()
# is, with what it trains said, and so is computing G's loss again after the step.
SHARED_GAN = """
    import torch
    from torch import nn
    torch.manual_seed(0)
    G, D = nn.Linear(2, 4), nn.Sequential(nn.Linear(4, 1), nn.Sigmoid())
    opt_G, opt_D = torch.optim.SGD(G.parameters(), lr=0.1), torch.optim.SGD(D.parameters(), lr=0.1)
    real, noise = torch.randn(3, 4), torch.randn(3, 2)
    fake = G(noise)
    p_fake = D(fake)
    d_loss = -(torch.log(D(real)) + torch.log(1 - p_fake)).mean()
    g_loss = torch.log(1 - p_fake).mean()
    opt_D.zero_grad()
    d_loss.backward(retain_graph=True)
    opt_D.step()
    opt_G.zero_grad()
    g_loss.backward()
    opt_G.step()
"""


def test_no_reordering_where_the_two_losses_share_a_graph(tmp_path):
    diagnosis = run_program(tmp_path, SHARED_GAN).diagnosis
    assert diagnosis.code == "AD103"
    messages = [h.message for h in diagnosis.help]
    assert not any("do its update" in m for m in messages)
    assert messages[0].startswith("call opt_D.step() after g_loss.backward()")
    assert "it trains them on d_loss + g_loss" in messages[0]
    # Detaching p_fake in G's loss would cut G off its own gradient: not suggested.
    assert "detach" not in messages[0]
    assert diagnosis.help[1].replacement == "opt_D.step()\np_fake = D(fake)\ng_loss = torch.log(1 - p_fake).mean()"


CACHED = """
    import torch
    from torch import nn
    torch.manual_seed(0)

    class Scaled(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Linear(1, 2)
            self._coefficients = None

        def forward(self, x):
            if self._coefficients is None:  # GUARD
                self._coefficients = self.net(torch.ones(1))  # CACHED
            return x * self._coefficients[0] + self._coefficients[1]

    model = Scaled()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(8), torch.randn(8)
    for step in range(3):
        opt.zero_grad()
        loss = (model(x) - y).pow(2).mean()
        loss.backward()
        opt.step()
    params = [p.detach() for p in model.parameters()]
"""


def test_a_value_computed_once_and_kept_is_computed_in_every_call(tmp_path):
    outcome = run_program(tmp_path, CACHED)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD302"
    assert diagnosis.primary.line == outcome.line("CACHED")
    assert any("not computed again since" in note for note in diagnosis.notes)
    first = diagnosis.help[0]
    assert first.message.startswith("compute self._coefficients in every call")
    assert "detaching it would stop every later loss from training" in first.message
    assert first.location.line == outcome.line("GUARD")
    assert first.replacement == "self._coefficients = self.net(torch.ones(1))"
    every_call = CACHED.replace("            if self._coefficients is None:  # GUARD\n    ", "")
    assert _same_params(tmp_path, outcome, 0, every_call)


CARRIED_INTO_A_LIST = """
    import torch
    from torch import nn
    torch.manual_seed(0)
    policy, value = nn.Linear(3, 2), nn.Linear(3, 1)
    value_opt = torch.optim.SGD(value.parameters(), lr=0.1)
    policy_opt = torch.optim.SGD(policy.parameters(), lr=0.1)
    states, returns = torch.randn(3, 3), torch.randn(3)
    terms = []
    for t in range(3):
        advantage = returns[t] - value(states[t]).squeeze()  # MADE
        value_opt.zero_grad()
        advantage.pow(2).backward()
        value_opt.step()
        terms.append(torch.log_softmax(policy(states[t]), -1)[0] * advantage)  # USE
    policy_loss = -torch.stack(terms).mean()
    policy_opt.zero_grad()
    policy_loss.backward()
    policy_opt.step()
    params = [p.detach() for p in [*policy.parameters(), *value.parameters()]]
"""


def test_the_line_that_carries_the_value_into_the_other_loss_is_changed(tmp_path):
    outcome = run_program(tmp_path, CARRIED_INTO_A_LIST)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD302"
    assert diagnosis.primary.line == outcome.line("USE")
    assert [loc.line for loc in diagnosis.related if loc.role == "made"] == [outcome.line("MADE")]
    first = diagnosis.help[0]
    assert first.replacement == "terms.append(torch.log_softmax(policy(states[t]), -1)[0] * advantage.detach())"
    detached = CARRIED_INTO_A_LIST.replace("[0] * advantage)", "[0] * advantage.detach())")
    assert _same_params(tmp_path, outcome, 0, detached)
