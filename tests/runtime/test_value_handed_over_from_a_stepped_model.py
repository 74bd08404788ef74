"""AD103 for a value handed over from a model another optimizer has already stepped: the critic
steps and returns its TD error, still carrying the critic's graph; the actor's backward() runs
into the changed critic and PyTorch raises. Named where the actor's loss reads the value; the help
detaches it there, which gives a reference's values. A value whose graph also reaches what the
function's own optimizer trains (a discriminator's output on generated samples, handed to the
generator's step) gets the other helps, not this one."""

import torch

from helpers import apply_help, run_plain, run_program

# The source of the report: https://github.com/ClownW/Reinforcement-learning-with-PyTorch/issues/1
ACTOR_CRITIC = """
    import torch
    import torch.nn as nn

    torch.manual_seed(0)


    class Actor:
        def __init__(self):
            self.net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2), nn.Softmax(dim=-1))
            self.optimizer = torch.optim.Adam(self.net.parameters(), lr=1e-3)

        def learn(self, s, a, td):
            log_prob = torch.log(self.net(s)[a])
            loss = -(log_prob * td).sum()  # READ
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()


    class Critic:
        def __init__(self):
            self.net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
            self.optimizer = torch.optim.Adam(self.net.parameters(), lr=1e-2)

        def learn(self, s, r, s_):
            td_error = r + 0.9 * self.net(s_) - self.net(s)
            self.optimizer.zero_grad()
            (td_error ** 2).sum().backward(retain_graph=True)
            self.optimizer.step()
            return td_error


    actor, critic = Actor(), Critic()
    states = torch.randn(6, 4)
    for t in range(5):
        td_error = critic.learn(states[t], 1.0, states[t + 1])
        actor.learn(states[t], t % 2, td_error)
    learned = [p.detach().clone() for net in (actor.net, critic.net) for p in net.parameters()]
"""

REFERENCE = ACTOR_CRITIC.replace("loss = -(log_prob * td).sum()  # READ", "loss = -(log_prob * td.detach()).sum()")


def test_the_handed_over_value_is_named_where_the_loss_reads_it(tmp_path):
    outcome = run_program(tmp_path, ACTOR_CRITIC)
    assert isinstance(outcome.error, RuntimeError)
    assert outcome.diagnosis.code == "AD103"
    assert outcome.diagnosis.primary.line == outcome.line("READ")
    assert outcome.diagnosis.help[0].message.startswith("use td as a value here (td.detach())")


def test_the_help_gives_the_references_values(tmp_path):
    outcome = run_program(tmp_path, ACTOR_CRITIC)
    fixed = apply_help(outcome)
    assert "loss = -(log_prob * td.detach()).sum()" in fixed
    plain = run_plain(tmp_path, fixed)
    reference = run_plain(tmp_path, REFERENCE, name="reference.py")
    assert all(torch.equal(a, b) for a, b in zip(plain["learned"], reference["learned"]))


def test_a_value_that_also_reaches_the_functions_own_model_gets_no_detach(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        torch.manual_seed(0)
        generator, discriminator = nn.Linear(2, 3), nn.Linear(3, 1)
        g_optimizer = torch.optim.SGD(generator.parameters(), lr=0.1)
        d_optimizer = torch.optim.SGD(discriminator.parameters(), lr=0.1)


        def generator_step(scores_on_fake):
            loss = F.binary_cross_entropy_with_logits(scores_on_fake, torch.ones_like(scores_on_fake))
            g_optimizer.zero_grad()
            loss.backward()
            g_optimizer.step()


        fake = generator(torch.randn(4, 2))
        scores = discriminator(fake)
        d_loss = F.binary_cross_entropy_with_logits(scores, torch.zeros_like(scores))
        d_optimizer.zero_grad()
        d_loss.backward(retain_graph=True)
        d_optimizer.step()
        generator_step(scores)
    """)
    assert outcome.diagnosis.code == "AD103"
    assert all(".detach()" not in (h.replacement or "") for h in outcome.diagnosis.help)
