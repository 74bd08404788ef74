"""Correct programs that once drew false alarms from the full and strict modes (seen on
real projects' test suites: an ODE solver's stage buffer, gradcheck, a model whose weights
are rescaled after a forward pass whose graph is kept). Each stays silent in every mode,
fails in none, and its gradients are bitwise those of a plain run. Next to each, the
buggy variant that must still be reported."""

import traceback

import pytest
import torch

from helpers import grads_equal, run_plain, run_program

MODES = {"default": {}, "full": {"mode": "full"}, "strict": {"strict": True}}

CORRECT = {
    # SmoothGrad: the input's gradient is summed over noisy copies on purpose; the input never
    # changes between the backward() calls.
    "input gradients summed on purpose over noisy copies": """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
        x = torch.randn(2, 4, requires_grad=True)
        for _ in range(5):
            model(x + 0.1 * torch.randn(2, 4)).sum().backward()
        grads = [x.grad / 5]
    """,
    # Gradient descent by hand that clears the gradients after each update.
    "hand-written descent that clears the gradients": """
        import torch

        torch.manual_seed(0)
        x, y = torch.randn(16, 1), torch.randn(16, 1)
        w = torch.zeros(1, requires_grad=True)
        for _ in range(5):
            loss = ((x * w - y) ** 2).mean()
            loss.backward()
            with torch.no_grad():
                w -= 0.1 * w.grad
                w.grad.zero_()
        grads = [w.grad]
    """,
    # A target network synchronised, every few steps, from a state_dict taken once: the dict
    # follows the online network on purpose, and it is loaded into another module.
    "a target network synchronised from a live state_dict": """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        online, target = nn.Linear(3, 2), nn.Linear(3, 2)
        live = online.state_dict()
        optimizer = torch.optim.SGD(online.parameters(), lr=0.1)
        for step in range(6):
            s, s2 = torch.randn(4, 3), torch.randn(4, 3)
            loss = (online(s) - target(s2).detach()).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if step % 2 == 1:
                target.load_state_dict(live)
        grads = [p.grad for p in online.parameters()]
    """,
    # Best weights kept as copies, and a state_dict loaded back before any step.
    "best weights copied, and a reload before any step": """
        import copy
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        model = nn.Linear(3, 1)
        model.load_state_dict(model.state_dict())
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        best = copy.deepcopy(model.state_dict())
        for _ in range(3):
            loss = model(torch.randn(4, 3)).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        grads = [p.grad for p in model.parameters()]
        model.load_state_dict(best)
    """,
    # A WGAN trains its critic five times per generator step; the critic's loss detaches the
    # generator's samples, and the generator's own optimizer steps only after its loss.
    "a generator detached for five critic steps": """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        G, D = nn.Linear(2, 3), nn.Linear(3, 1)
        opt_g = torch.optim.SGD(G.parameters(), lr=0.01)
        opt_d = torch.optim.SGD(D.parameters(), lr=0.01)
        real = torch.randn(8, 3)
        for step in range(12):
            z = torch.randn(8, 2)
            fake = G(z).detach()
            loss_d = D(fake).mean() - D(real).mean()
            opt_d.zero_grad()
            loss_d.backward()
            opt_d.step()
            if step % 5 == 4:
                loss_g = -D(G(z)).mean()
                opt_g.zero_grad()
                loss_g.backward()
                opt_g.step()
        grads = [p.grad for p in [*G.parameters(), *D.parameters()]]
    """,
    # A DQN's target network is detached on purpose and trained by no optimizer.
    "a target network detached, in no optimizer": """
        import copy
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        q = nn.Linear(4, 2)
        target = copy.deepcopy(q)
        optimizer = torch.optim.SGD(q.parameters(), lr=0.1)
        for _ in range(4):
            s, s2, r = torch.randn(8, 4), torch.randn(8, 4), torch.randn(8)
            y = r + 0.9 * target(s2).detach().max(1)[0]
            loss = (q(s).max(1)[0] - y).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        grads = [p.grad for p in q.parameters()]
    """,
    # A teacher under no_grad whose parameters are in the student's optimizer by accident of
    # construction but frozen with requires_grad_(False).
    "a frozen teacher under no_grad": """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        teacher, student = nn.Linear(4, 3), nn.Linear(4, 3)
        teacher.requires_grad_(False)
        optimizer = torch.optim.SGD([*student.parameters(), *teacher.parameters()], lr=0.1)
        for _ in range(4):
            x = torch.randn(8, 4)
            with torch.no_grad():
                soft = teacher(x).softmax(-1)
            loss = -(soft * student(x).log_softmax(-1)).sum(-1).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        grads = [p.grad for p in student.parameters()]
    """,
    # A probabilistic program traces its guide (an nn.Linear) and throws the result away; the
    # loss reads only the guide's weight, so its bias gets no gradient: nothing was cut
    # (Pyro's tests/nn/test_module.py::test_sample drew AD301 here).
    "a module's result thrown away": """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        model, guide = nn.Linear(3, 1), nn.Linear(3, 1)
        optimizer = torch.optim.SGD([*model.parameters(), *guide.parameters()], lr=0.1)
        for _ in range(3):
            x = torch.randn(4, 3)
            guide(x)  # traced only
            loss = model(x).pow(2).mean() + guide.weight.pow(2).sum()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        grads = [p.grad for p in model.parameters()] + [guide.weight.grad]
    """,
    # The thrown-away result's memory is freed at once and is, most often, the next layer's
    # result (same size), which a third module is given: the storage is not the same one.
    "a module's result thrown away, its memory reused": """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        model, guide, head = nn.Linear(3, 4), nn.Linear(3, 4), nn.Linear(4, 1)
        optimizer = torch.optim.SGD([*model.parameters(), *guide.parameters(), *head.parameters()], lr=0.1)
        for _ in range(3):
            x = torch.randn(4, 3)
            guide(x)  # traced only
            h = model(x)
            loss = head(h).pow(2).mean() + guide.weight.pow(2).sum()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        grads = [p.grad for p in [*model.parameters(), *head.parameters()]] + [guide.weight.grad]
    """,
    # The online network acts under no_grad; a helper detaches the target network's values on
    # purpose. The target network is in no optimizer: nothing is cut that should train.
    "a target network's values detached in a helper": """
        import copy
        import torch
        import torch.nn as nn

        def td_target(next_values, rewards):
            next_values = next_values.detach()
            return rewards + 0.9 * next_values.max(dim=1).values

        torch.manual_seed(0)
        online = nn.Linear(4, 2)
        target = copy.deepcopy(online)
        optimizer = torch.optim.SGD(online.parameters(), lr=0.1)
        for _ in range(4):
            states, next_states = torch.randn(8, 4), torch.randn(8, 4)
            with torch.no_grad():
                actions = online(states).argmax(dim=1)
            rewards = torch.randn(8)
            chosen = online(states).gather(1, actions.unsqueeze(1)).squeeze(1)
            loss = (chosen - td_target(target(next_states), rewards)).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        grads = [p.grad for p in online.parameters()]
    """,
    # Actor-critic done right, with a shared trunk: the advantage is detached in the policy term;
    # the entropy bonus multiplies the policy's probabilities with its own log-probabilities.
    "an entropy bonus beside a detached advantage": """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        torch.manual_seed(0)
        trunk, actor, critic = nn.Linear(4, 8), nn.Linear(8, 3), nn.Linear(8, 1)
        optimizer = torch.optim.SGD([*trunk.parameters(), *actor.parameters(), *critic.parameters()], lr=0.1)
        for _ in range(3):
            hidden = torch.tanh(trunk(torch.randn(16, 4)))
            logits = actor(hidden)
            log_probs = torch.log_softmax(logits, dim=-1)
            entropy = -(log_probs.exp() * log_probs).sum(-1).mean()
            actions = torch.distributions.Categorical(logits=logits).sample()
            values = critic(hidden).squeeze(-1)
            returns = torch.randn(16)
            advantage = returns - values
            chosen = log_probs.gather(1, actions.unsqueeze(1)).squeeze(1)
            loss = -(chosen * advantage.detach()).mean() - 0.01 * entropy + F.mse_loss(values, returns)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        grads = [p.grad for p in critic.parameters()]
    """,
    # Discrete SAC's actor term: a learned scalar temperature times the log-probabilities; the
    # temperature has its own optimizer, which clears its gradient before its own loss.
    "a learned temperature times log-probabilities": """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        actor, q = nn.Linear(4, 3), nn.Linear(4, 3)
        log_alpha = torch.zeros(1, requires_grad=True)
        actor_optimizer = torch.optim.SGD(actor.parameters(), lr=0.1)
        alpha_optimizer = torch.optim.SGD([log_alpha], lr=0.1)
        for _ in range(3):
            states = torch.randn(8, 4)
            log_probs = torch.log_softmax(actor(states), dim=-1)
            probs = log_probs.exp()
            alpha = log_alpha.exp()
            actor_loss = (probs * (alpha * log_probs - q(states).detach())).sum(-1).mean()
            actor_optimizer.zero_grad()
            actor_loss.backward()
            actor_optimizer.step()
            alpha_loss = -(log_alpha * (log_probs.detach() + 1.0)).mean()
            alpha_optimizer.zero_grad()
            alpha_loss.backward()
            alpha_optimizer.step()
        grads = [p.grad for p in actor.parameters()] + [log_alpha.grad]
    """,
    # The advantage is not detached, but the critic has its own optimizer and clears its
    # gradients before its own loss: the policy term's gradient in it is never applied.
    "an undetached advantage whose critic clears its gradients first": """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        torch.manual_seed(0)
        actor, critic = nn.Linear(4, 3), nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
        actor_optimizer = torch.optim.SGD(actor.parameters(), lr=0.1)
        critic_optimizer = torch.optim.SGD(critic.parameters(), lr=0.1)
        for _ in range(3):
            states = torch.randn(16, 4)
            dist = torch.distributions.Categorical(logits=actor(states))
            actions = dist.sample()
            returns = torch.randn(16)
            values = critic(states).squeeze(-1)
            actor_loss = -(dist.log_prob(actions) * (returns - values)).mean()
            actor_optimizer.zero_grad()
            actor_loss.backward()
            actor_optimizer.step()
            critic_loss = F.mse_loss(critic(states).squeeze(-1), returns)
            critic_optimizer.zero_grad()
            critic_loss.backward()
            critic_optimizer.step()
        grads = [p.grad for p in [*actor.parameters(), *critic.parameters()]]
    """,
    # Two views through the same network (SimCLR-like, a consistency term): both sides depend on
    # the same parameters, neither is a target of the other.
    "two views of one network compared": """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        torch.manual_seed(0)
        encoder = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 8))
        optimizer = torch.optim.SGD(encoder.parameters(), lr=0.1)
        for _ in range(3):
            x = torch.randn(16, 6)
            first, second = encoder(x + 0.1 * torch.randn(16, 6)), encoder(x + 0.1 * torch.randn(16, 6))
            loss = -F.cosine_similarity(first, second).mean() + F.mse_loss(first, second)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        grads = [p.grad for p in encoder.parameters()]
    """,
    # DQN with a target network: the bootstrapped target r + gamma * Q'(s') comes from a copy that
    # the optimizer does not hold (its parameters are not the prediction's).
    "bootstrapped target from a target network": """
        import copy

        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        torch.manual_seed(0)
        q_net = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
        target_net = copy.deepcopy(q_net)
        optimizer = torch.optim.Adam(q_net.parameters(), lr=1e-3)
        for _ in range(3):
            states, next_states = torch.randn(8, 4), torch.randn(8, 4)
            rewards = torch.randn(8)
            q_values = q_net(states).max(dim=1).values
            targets = rewards + 0.99 * target_net(next_states).max(dim=1).values
            loss = F.mse_loss(q_values, targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        grads = [p.grad for p in q_net.parameters()]
    """,
    # An offset consistency term on one network: the second view is shifted by a constant, not
    # discounted (a sum whose graph side is no product).
    "one network compared with its own output plus a constant": """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        torch.manual_seed(0)
        net = nn.Linear(5, 3)
        optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
        for _ in range(3):
            x = torch.randn(8, 5)
            shifted = torch.ones(8, 3) + net(x + 0.05)
            loss = F.mse_loss(net(x), shifted)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        grads = [p.grad for p in net.parameters()]
    """,
    # GAN feature matching: the generator's loss compares the discriminator's features of fakes
    # with those of real data; only the generator's optimizer steps after it, and the
    # discriminator clears its gradients before its own loss.
    "feature matching with the discriminator in its own optimizer": """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        torch.manual_seed(0)
        generator, features = nn.Linear(2, 4), nn.Sequential(nn.Linear(4, 8), nn.ReLU())
        judge = nn.Linear(8, 1)
        g_optimizer = torch.optim.SGD(generator.parameters(), lr=0.1)
        d_optimizer = torch.optim.SGD([*features.parameters(), *judge.parameters()], lr=0.1)
        for _ in range(3):
            real = torch.randn(16, 4)
            fake_features, real_features = features(generator(torch.randn(16, 2))), features(real)
            g_loss = F.mse_loss(fake_features.mean(0), real_features.mean(0))
            g_optimizer.zero_grad()
            g_loss.backward()
            g_optimizer.step()
            d_loss = F.softplus(-judge(features(real))).mean() + F.softplus(judge(features(generator(torch.randn(16, 2)).detach()))).mean()
            d_optimizer.zero_grad()
            d_loss.backward()
            d_optimizer.step()
        grads = [p.grad for p in generator.parameters()]
    """,
    # DCGAN's order: the fakes are made once, the discriminator steps on their detached copy, and
    # the generator's loss then uses the fakes made before that step. The discriminator's step
    # changed nothing the fakes were computed from.
    "fakes made before the discriminator's step": """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        torch.manual_seed(0)
        generator, discriminator = nn.Linear(2, 4), nn.Linear(4, 1)
        g_optimizer = torch.optim.Adam(generator.parameters(), lr=1e-3)
        d_optimizer = torch.optim.Adam(discriminator.parameters(), lr=1e-3)
        for _ in range(3):
            real, fake = torch.randn(8, 4), generator(torch.randn(8, 2))
            d_loss = F.softplus(-discriminator(real)).mean() + F.softplus(discriminator(fake.detach())).mean()
            d_optimizer.zero_grad()
            d_loss.backward()
            d_optimizer.step()
            g_loss = F.softplus(-discriminator(fake)).mean()
            g_optimizer.zero_grad()
            g_loss.backward()
            g_optimizer.step()
        grads = [p.grad for p in generator.parameters()]
    """,
    # Two optimizers, one backward() reaching both: a classification head (its own optimizer)
    # on a shared encoder, stepped between the head's loss and the reconstruction loss. The
    # encoder's step applies both losses' gradients on purpose (multi-task): the encoder is under
    # the head in the head's graph, not between its loss and another model's parameters (AD230).
    "multi-task head stepped between two losses on a shared encoder": """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        torch.manual_seed(0)
        encoder = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 4))
        head, decoder = nn.Linear(4, 3), nn.Linear(4, 6)
        model_optimizer = torch.optim.Adam([*encoder.parameters(), *decoder.parameters()], lr=1e-3)
        head_optimizer = torch.optim.Adam(head.parameters(), lr=1e-3)
        for _ in range(4):
            x, labels = torch.randn(8, 6), torch.randint(0, 3, (8,))
            model_optimizer.zero_grad()
            head_optimizer.zero_grad()
            head_loss = F.cross_entropy(head(encoder(x)), labels)
            head_loss.backward()
            head_optimizer.step()
            reconstruction = F.mse_loss(decoder(encoder(x)), x)
            reconstruction.backward()
            model_optimizer.step()
        grads = [p.grad for p in encoder.parameters()]
    """,
    # An introspective VAE's order: the encoder's loss reaches the decoder (through its samples),
    # the encoder steps, the decoder's own loss adds nothing to the decoder's gradients, and the
    # decoder steps on what the encoder's loss left: one backward()'s gradients, not two (AD230).
    "decoder stepped on the gradients of the encoder's loss only": """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        encoder, decoder = nn.Linear(6, 4), nn.Linear(2, 6)
        encoder_optimizer = torch.optim.Adam(encoder.parameters(), lr=1e-3)
        decoder_optimizer = torch.optim.Adam(decoder.parameters(), lr=1e-3)
        for _ in range(4):
            x = torch.randn(8, 6)
            mu, logvar = encoder(x).chunk(2, dim=1)
            reconstruction = decoder(mu + torch.randn_like(mu) * (0.5 * logvar).exp())
            rec_mu, _ = encoder(reconstruction).chunk(2, dim=1)
            encoder_loss = (reconstruction - x).pow(2).mean() + rec_mu.pow(2).mean()
            encoder_optimizer.zero_grad()
            decoder_optimizer.zero_grad()
            encoder_loss.backward()
            encoder_optimizer.step()
            again_mu, _ = encoder(reconstruction.detach()).chunk(2, dim=1)
            again_mu.pow(2).mean().backward()
            decoder_optimizer.step()
        grads = [p.grad for p in decoder.parameters()]
    """,
    # A solver's stage buffer: each stage reads the first i + 1 columns (a mul saves that
    # slice) and a custom Function writes column i + 1 through `.data`. The bytes of the
    # saved slice and of the written column interleave; no element is shared.
    "column written beside a saved slice": """
        import torch

        class PutColumn(torch.autograd.Function):
            @staticmethod
            def forward(ctx, buffer, value, column):
                ctx.column = column
                buffer.data[..., column] = value  # no version bump: the saved slice is untouched
                return buffer

            @staticmethod
            def backward(ctx, grad):
                return grad, grad[..., ctx.column], None

        torch.manual_seed(0)
        weight = torch.randn(3, 3, requires_grad=True)
        y = torch.randn(4, 3, requires_grad=True)
        step = torch.tensor(0.1, requires_grad=True)
        coefficients = [[0.5], [0.25, 0.25], [0.1, 0.2, 0.7]]
        stages = torch.zeros(4, 3, len(coefficients) + 1)
        stages = PutColumn.apply(stages, torch.tanh(y @ weight), 0)
        for i, row in enumerate(coefficients):
            mix = stages[..., :i + 1] * (torch.tensor(row) * step)  # mul saves the slice
            stage_input = y + mix.sum(-1)
            stages = PutColumn.apply(stages, torch.tanh(stage_input @ weight), i + 1)
        stages.sum().backward()
        grads = [weight.grad, y.grad, step.grad]
    """,
    # gradcheck perturbs its inputs in place (through `.data`) while the analytical pass's
    # graph is alive, and puts every value back before that graph is used.
    "gradcheck perturbs and restores": """
        import torch
        torch.manual_seed(0)
        x = torch.randn(4, 3, dtype=torch.double, requires_grad=True)
        w = torch.randn(3, 3, dtype=torch.double, requires_grad=True)
        function = lambda x, w: torch.tanh(x @ w).sin()
        assert torch.autograd.gradcheck(function, (x, w))
        assert torch.autograd.gradgradcheck(function, (x, w))
        function(x, w).sum().backward()
        grads = [x.grad, w.grad]
    """,
    # A value written through `.data` and put back before backward.
    "value put back before backward": """
        import torch
        torch.manual_seed(0)
        x = torch.randn(5, requires_grad=True)
        h = torch.exp(x)
        kept = h.data[2].clone()
        h.data[2] = 100.0
        h.data[2] = kept
        h.sum().backward()
        grads = [x.grad]
    """,
    # A forward pass whose graph is kept (its output is alive) but never backpropagated,
    # then an in-place rescale of the weights under no_grad, then the real step.
    "kept graph then no_grad weight rescale": """
        import torch
        from torch import nn
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
        scale = torch.randn(2, requires_grad=True)
        logits = model(torch.randn(3, 4)) * scale  # kept, never backpropagated
        with torch.no_grad():
            for p in model.parameters():
                p.mul_(0.5)
            scale.mul_(2.0)
        loss = (model(torch.randn(3, 4)) * scale).pow(2).mean()
        loss.backward()
        grads = [p.grad for p in model.parameters()] + [scale.grad]
    """,
    # An adjoint solver (ODE/SDE libraries): forward integrates under no_grad and saves the
    # trajectory; backward re-enters autograd on detached copies, calls autograd.grad with
    # allow_unused, and accumulates into its adjoint state in place, step after step.
    "adjoint backward re-enters autograd": """
        import torch

        class EulerAdjoint(torch.autograd.Function):
            @staticmethod
            def forward(ctx, y0, weight, steps):
                states = [y0]
                for _ in range(steps):
                    states.append(states[-1] + 0.1 * torch.tanh(states[-1] @ weight))
                trajectory = torch.stack(states)
                ctx.save_for_backward(trajectory, weight)
                return trajectory

            @staticmethod
            def backward(ctx, grad_trajectory):
                trajectory, weight = ctx.saved_tensors
                adjoint_state = grad_trajectory[-1].clone()
                adjoint_weight = torch.zeros_like(weight)
                unused = torch.zeros(1, requires_grad=True)
                for i in range(len(trajectory) - 1, 0, -1):
                    with torch.enable_grad():
                        state = trajectory[i - 1].detach().requires_grad_()
                        w = weight.detach().requires_grad_()
                        stepped = state + 0.1 * torch.tanh(state @ w)
                        d_state, d_weight, d_unused = torch.autograd.grad(
                            stepped, (state, w, unused), adjoint_state, allow_unused=True)
                    assert d_unused is None
                    adjoint_state = d_state
                    adjoint_weight += d_weight
                    adjoint_state += grad_trajectory[i - 1]
                return adjoint_state, adjoint_weight, None

        torch.manual_seed(0)
        y0 = torch.randn(4, 3, requires_grad=True)
        weight = torch.randn(3, 3, requires_grad=True)
        trajectory = EulerAdjoint.apply(y0, weight, 5)
        trajectory.pow(2).sum().backward()
        grads = [y0.grad, weight.grad]
    """,
    # A model with an auxiliary head its forward never calls; per-sample weights come
    # from the same model under no_grad. The head gets no gradient because it never ran,
    # not because of the no_grad block (seen on a held-out bug set's correct version).
    "unused head beside a no_grad block": """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        class Classifier(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Linear(5, 8)
                self.head = nn.Linear(8, 3)
                self.aux_head = nn.Linear(8, 2)

            def forward(self, x):
                return self.head(torch.relu(self.body(x)))

        torch.manual_seed(0)
        net = Classifier()
        x, y = torch.randn(12, 5), torch.randint(0, 3, (12,))
        for step in range(3):
            net.zero_grad()
            with torch.no_grad():
                w = torch.softmax(-F.cross_entropy(net(x), y, reduction="none"), 0)
            (w * F.cross_entropy(net(x), y, reduction="none")).sum().backward()
        grads = [net.body.weight.grad, net.head.weight.grad]
    """,
    # A Hermitian right-hand side (torchdyn's complex ODE test): the adjoint is a view of dx
    # with the conjugate bit, which PyTorch copies into new memory before add_ reads it.
    "complex tensor plus its adjoint in place": """
        import torch
        torch.manual_seed(0)
        omega = torch.randn(1, requires_grad=True)
        x = torch.randn(2, 2, dtype=torch.complex128, requires_grad=True)
        sx = torch.tensor([[0, 1], [1, 0]], dtype=torch.complex128)
        dx = -1.0j * omega * sx @ x
        dx += dx.adjoint()
        dx.sub_(torch._neg_view(dx.conj()).mT)
        (dx.abs() ** 2).sum().backward()
        grads = [omega.grad, x.grad]
    """,
    # REINFORCE with a Gaussian policy: the action drawn with torch.normal is only given to its
    # own distribution's log_prob (no learned op between); the gradient goes through log_prob.
    "policy gradient on a torch.normal action": """
        import torch
        import torch.nn as nn
        from torch.distributions import Normal

        torch.manual_seed(0)
        policy = nn.Linear(3, 2)
        log_std = nn.Parameter(torch.zeros(2))
        for step in range(3):
            mean = policy(torch.randn(8, 3))
            action = torch.normal(mean, log_std.exp().expand_as(mean))
            advantage = torch.randn(8)
            loss = -(Normal(mean, log_std.exp()).log_prob(action).sum(-1) * advantage).mean()
            loss.backward()
        grads = [policy.weight.grad, log_std.grad]
    """,
    # Bilinear interpolation at learned positions: floor() sends zeros, but the fraction
    # `position - floor(position)` carries the gradient to the positions.
    "interpolation weights from a floor": """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        locate, head = nn.Linear(4, 1), nn.Linear(1, 1)
        table = torch.randn(12)
        position = (torch.sigmoid(locate(torch.randn(6, 4))) * 10).squeeze(-1)
        below = position.floor()
        fraction = position - below
        value = table[below.long()] * (1 - fraction) + table[below.long() + 1] * fraction
        head(value.unsqueeze(-1)).sum().backward()
        grads = [locate.weight.grad, head.weight.grad]
    """,
    # Sharpness-aware minimisation: the wrapper's zero_grad() clears, and its base optimizer,
    # built on the same param_groups, steps (AD221 is for an optimizer whose parameters no one steps).
    "a wrapper optimizer that clears while its base optimizer steps": """
        import torch
        import torch.nn as nn

        class Wrapper(torch.optim.Optimizer):
            def __init__(self, params):
                super().__init__(params, dict(lr=0.1))
                self.base = torch.optim.SGD(self.param_groups, lr=0.1)

        torch.manual_seed(0)
        model = nn.Linear(3, 1)
        optimizer = Wrapper(model.parameters())
        for step in range(4):
            model(torch.randn(4, 3)).sum().backward()
            optimizer.base.step()
            optimizer.zero_grad()
        grads = [p.detach().clone() for p in model.parameters()]
    """,
    # A PGD attack that clears its perturbation's gradient through `.grad.data.zero_()`: the
    # gradient's version does not move, its values do.
    "attack gradient cleared through .data": """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        torch.manual_seed(0)
        model = nn.Linear(4, 3)
        x, y = torch.randn(5, 4), torch.randint(0, 3, (5,))
        delta = torch.zeros_like(x).uniform_(-0.1, 0.1).requires_grad_()
        for _ in range(5):
            F.cross_entropy(model(x + delta), y).backward()
            delta.data = (delta.data + 0.05 * delta.grad.data.sign()).clamp(-0.3, 0.3)
            delta.grad.data.zero_()
        grads = [delta.detach().clone()]
    """,
    # R-Drop: the same model called twice under dropout gives two predictions; their divergence
    # is the consistency term (not a value compared with itself).
    "a model called twice under dropout, compared": """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.3), nn.Linear(8, 3))
        x, y = torch.randn(6, 4), torch.randint(0, 3, (6,))
        consistency = F.kl_div(F.log_softmax(model(x), -1), F.log_softmax(model(x), -1), log_target=True,
                               reduction="batchmean")
        loss = F.cross_entropy(model(x), y) + consistency
        loss.backward()
        grads = [p.grad for p in model.parameters()]
    """,
    # A target network kept attached to the loss and moved towards the online network by hand:
    # its .grad accumulates unused, and its update reads no gradient (not AD218).
    "target network moved by a moving average, its gradients unused": """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        online, target = nn.Linear(3, 1), nn.Linear(3, 1)
        optimizer = torch.optim.SGD(online.parameters(), lr=0.1)
        for step in range(5):
            x = torch.randn(8, 3)
            loss = ((online(x) - target(x)) ** 2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            with torch.no_grad():
                for t, o in zip(target.parameters(), online.parameters()):
                    t.mul_(0.9).add_(0.1 * o)
        grads = [p.detach().clone() for p in online.parameters()]
    """,
    # NLL of log-probabilities made without log_softmax (a logsumexp normalisation), and CTC
    # of log_softmax output: the losses' inputs are log-probabilities.
    "nll and ctc of log-probabilities": """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        torch.manual_seed(0)
        head, rnn_out = nn.Linear(4, 3), nn.Linear(5, 6)
        scores = head(torch.randn(8, 4))
        nll = F.nll_loss(scores - scores.logsumexp(1, keepdim=True), torch.randint(0, 3, (8,)))
        log_probs = rnn_out(torch.randn(10, 2, 5)).log_softmax(-1)
        ctc = F.ctc_loss(log_probs, torch.randint(1, 6, (2, 3)), torch.full((2,), 10), torch.full((2,), 3))
        (nll + ctc).backward()
        grads = [head.weight.grad, rnn_out.weight.grad]
    """,
    # Straight-through rounding: the rounded value in the forward pass, the identity's gradient.
    "straight-through rounding before a layer": """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        first, second = nn.Linear(4, 3), nn.Linear(3, 1)
        hidden = torch.sigmoid(first(torch.randn(5, 4))) * 8
        hidden = hidden.round().detach() + (hidden - hidden.detach())
        second(hidden).sum().backward()
        grads = [first.weight.grad, second.weight.grad]
    """,
}


@pytest.mark.parametrize("mode", ["light", "full"])
@pytest.mark.parametrize("line, raises", [
    ("dx -= dx[:, :1]", False),  # no bit: the kernel reads column 0 as it writes it
    ("dx += dx.mT", True),  # a transpose without conjugation: PyTorch refuses the write
])
def test_an_overlapping_complex_operand_is_still_reported(tmp_path, mode, line, raises):
    outcome = run_program(tmp_path, f"""
        import torch
        x = torch.randn(2, 2, dtype=torch.complex128, requires_grad=True)
        dx = x * 2
        {line}  # WRITE
        dx.abs().sum().backward()
    """, mode=mode)
    assert (outcome.error is not None) == raises
    assert [d.code for d in outcome.diagnoses] == ["AD203"]
    assert outcome.diagnosis.primary.line == outcome.line("WRITE")


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("name", sorted(CORRECT))
def test_correct_pattern_is_silent_and_unchanged(tmp_path, name, mode):
    plain = run_plain(tmp_path, CORRECT[name], "plain.py")
    outcome = run_program(tmp_path, CORRECT[name], **MODES[mode])
    assert outcome.error is None, outcome.error
    assert outcome.diagnoses == [] and outcome.warnings == []
    assert grads_equal(outcome.namespace["grads"], plain["grads"])


@pytest.mark.parametrize("mode", ["light", "full"])
def test_a_column_write_into_the_saved_slice_is_still_reported(tmp_path, mode):
    # The same buffer, but the write lands inside the slice a mul saved.
    outcome = run_program(tmp_path, """
        import torch
        buffer = torch.zeros(4, 3, 4)
        weight = torch.randn(3, requires_grad=True)
        mix = buffer[..., :2] * weight[:, None]  # SAVE
        buffer.data[..., 1] = 1.0  # WRITE
        mix.sum().backward()
    """, mode=mode)
    assert outcome.error is None
    assert [d.code for d in outcome.diagnoses] == ["AD201"]
    assert outcome.diagnosis.primary.line == outcome.line("WRITE")


@pytest.mark.parametrize("mode", ["light", "full"])
def test_a_value_not_put_back_is_still_reported(tmp_path, mode):
    outcome = run_program(tmp_path, """
        import torch
        x = torch.randn(5, requires_grad=True)
        h = torch.exp(x)
        kept = h.data[2].clone()
        h.data[2] = 100.0  # WRITE
        h.data[3] = kept
        h.sum().backward()
    """, mode=mode)
    assert [d.code for d in outcome.diagnoses] == ["AD201"]
    assert outcome.diagnosis.primary.line == outcome.line("WRITE")


def test_strict_raises_when_backward_reaches_a_rescaled_weight(tmp_path):
    # The kept graph *is* backpropagated here: backward fails, as without the doctor, at the
    # same line (before the engine runs), with the write named.
    outcome = run_program(tmp_path, """
        import torch
        x = torch.randn(3, requires_grad=True)
        w = torch.randn(3, requires_grad=True)
        out = (x * w).sum()  # SAVE
        with torch.no_grad():
            w.mul_(0.5)  # WRITE
        out.backward()  # BACKWARD
    """, strict=True)
    assert isinstance(outcome.error, RuntimeError)
    assert "modified by an inplace operation" in "\n".join(outcome.error.__notes__)  # PyTorch's words
    assert outcome.diagnosis.code == "AD101"
    assert outcome.diagnosis.primary.line == outcome.line("WRITE")


def test_strict_raises_when_backward_reaches_a_silent_write(tmp_path):
    outcome = run_program(tmp_path, """
        import torch
        x = torch.randn(5, requires_grad=True)
        h = torch.exp(x)
        h.data[2] = 100.0  # WRITE
        h.sum().backward()  # BACKWARD
    """, strict=True)
    assert outcome.diagnosis.code == "AD201"
    assert outcome.diagnosis.primary.line == outcome.line("WRITE")
    user_lines = [frame.lineno for frame in traceback.extract_tb(outcome.error.__traceback__)
                  if frame.filename == outcome.path]
    assert user_lines[-1] == outcome.line("BACKWARD")  # decided at backward, not at the write


def test_restore_check_sees_any_one_change_and_swaps():
    from autograd_doctor.recording.fingerprint import content_before_write

    for dtype in (torch.float32, torch.float64, torch.float16, torch.int64, torch.bool, torch.complex64):
        x = (torch.randn(6, 5) * 3).to(dtype)
        before = content_before_write(x)
        assert before is not None and content_before_write(x.clone()) == before
        flat = x.view(-1)
        for i in range(flat.numel()):
            changed = flat.clone()
            changed[i] = flat[(i + 1) % flat.numel()] if dtype is torch.bool else flat[i] + 1
            if not torch.equal(changed, flat):
                assert content_before_write(changed) != before
        swapped = flat.clone()
        swapped[0], swapped[7] = flat[7].clone(), flat[0].clone()
        if not torch.equal(swapped, flat):
            assert content_before_write(swapped) != before
    nan = torch.tensor([float("nan"), -0.0, 0.0])
    assert content_before_write(nan) == content_before_write(nan.clone())
    assert content_before_write(torch.tensor([0.0, 0.0, 0.0])) != content_before_write(torch.tensor([0.0, -0.0, 0.0]))


@pytest.mark.parametrize("mode", ["light", "full"])
def test_a_model_cut_off_under_no_grad_while_its_optimizer_trains_the_rest(tmp_path, mode):
    # The encoder runs under no_grad, yet one optimizer holds it and the head: each step
    # trains the head and leaves the encoder where it started.
    outcome = run_program(tmp_path, """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        encoder, head = nn.Linear(4, 6), nn.Linear(6, 2)
        optimizer = torch.optim.Adam([*encoder.parameters(), *head.parameters()], lr=0.01)
        for _ in range(3):
            x = torch.randn(8, 4)
            with torch.no_grad():
                features = encoder(x)  # CUT
            loss = head(features).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    """, mode=mode)
    assert outcome.error is None
    (diagnosis,) = outcome.diagnoses
    assert diagnosis.code == "AD301"
    assert diagnosis.title.startswith("parameters encoder.weight, encoder.bias got no gradient")
    assert diagnosis.primary.line == outcome.line("CUT")
