"""Ordinary, correct training code that the optimizer, loss-term, no_grad and leaf-gradient
diagnoses (AD102, AD142, AD143, AD206, AD207, AD301, AD309) look at. Each program re-creates,
in a few lines of our own, a pattern met in real projects' training scripts and test suites
(GANs with weight-norm and spectral-norm layers, an actor-critic with target networks,
knowledge distillation, an EMA copy, gradient accumulation, truncated BPTT with a hand-written
SGD step, WGAN-GP, fine-tuning schedules). Each stays silent in every mode, fails in none, and
its gradients and final parameters are bitwise those of a plain run."""

import pytest

from helpers import grads_equal, run_plain, run_program

MODES = {"default": {}, "full": {"mode": "full"}, "strict": {"strict": True}}

CORRECT = {
    # A vocoder-style GAN: weight-norm convolutions in the generator, a spectral-norm one in
    # the discriminator, two optimizers and schedulers, the generator's output detached for
    # the discriminator's step; weight norm removed for inference while both optimizers live.
    "weight-norm generator, spectral-norm discriminator, weight norm removed for inference": """
        import itertools
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        from torch.nn.utils import remove_weight_norm, spectral_norm, weight_norm

        torch.manual_seed(0)
        generator = nn.Sequential(weight_norm(nn.Conv1d(4, 8, 3, padding=1)), nn.LeakyReLU(0.1),
                                  weight_norm(nn.ConvTranspose1d(8, 1, 4, 2, 1)), nn.Tanh())
        discriminator = nn.Sequential(spectral_norm(nn.Conv1d(1, 4, 5, 2)), nn.LeakyReLU(0.1),
                                      weight_norm(nn.Conv1d(4, 1, 3)))
        optim_g = torch.optim.AdamW(generator.parameters(), 2e-4, betas=[0.8, 0.99])
        optim_d = torch.optim.AdamW(discriminator.parameters(), 2e-4, betas=[0.8, 0.99])
        scheduler_g = torch.optim.lr_scheduler.ExponentialLR(optim_g, 0.999)
        scheduler_d = torch.optim.lr_scheduler.ExponentialLR(optim_d, 0.999)
        for epoch in range(2):
            x, y = torch.randn(2, 4, 16), torch.randn(2, 1, 32) * 0.1
            y_hat = generator(x)
            optim_d.zero_grad()
            loss_d = ((1 - discriminator(y)) ** 2).mean() + (discriminator(y_hat.detach()) ** 2).mean()
            loss_d.backward()
            optim_d.step()
            optim_g.zero_grad()
            loss_g = ((1 - discriminator(y_hat)) ** 2).mean() + F.l1_loss(y_hat, y) * 45
            loss_g.backward()
            optim_g.step()
            scheduler_g.step()
            scheduler_d.step()
        grads = [p.grad for p in itertools.chain(generator.parameters(), discriminator.parameters())]
        generator.eval()
        for layer in (generator[0], generator[2]):
            remove_weight_norm(layer)
        with torch.no_grad():
            audio = generator(torch.randn(1, 4, 16))
        grads = grads + [p.detach().clone() for p in generator.parameters()] + [audio]
    """,
    # Parametrized layers (weight_norm, spectral_norm, orthogonal), the optimizer built after.
    "parametrized layers, optimizer built after them": """
        import torch
        import torch.nn as nn
        from torch.nn.utils import parametrizations

        torch.manual_seed(0)
        net = nn.Sequential(parametrizations.weight_norm(nn.Linear(8, 16)), nn.ReLU(),
                            parametrizations.spectral_norm(nn.Linear(16, 16)), nn.Tanh(),
                            parametrizations.orthogonal(nn.Linear(16, 4)))
        optimizer = torch.optim.Adam(net.parameters(), 1e-3)
        for _ in range(3):
            optimizer.zero_grad()
            net(torch.randn(5, 8)).pow(2).mean().backward()
            optimizer.step()
        grads = [p.grad for p in net.parameters()] + [p.detach().clone() for p in net.parameters()]
    """,
    # Knowledge distillation: the teacher's logits come from a helper that runs under no_grad
    # (a cut the program means); the student's own terms carry the gradient.
    "distillation, the teacher's logits from a no_grad helper": """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        torch.manual_seed(0)
        teacher, student = nn.Linear(8, 4), nn.Linear(8, 4)

        def teacher_logits(x):
            with torch.no_grad():
                return teacher(x)

        optimizer = torch.optim.SGD(student.parameters(), 0.1)
        temperature = 2.0
        for _ in range(3):
            x = torch.randn(6, 8)
            soft_targets = F.softmax(teacher_logits(x) / temperature, -1)
            kd = F.kl_div(F.log_softmax(student(x) / temperature, -1), soft_targets, reduction="batchmean")
            loss = kd * temperature ** 2 + 0.5 * F.cross_entropy(student(x), torch.randint(0, 4, (6,)))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        grads = [p.grad for p in student.parameters()] + [p.detach().clone() for p in student.parameters()]
    """,
    # Gradient accumulation with a warm-up weight that is a Python number, a running loss
    # read with .item(), a frozen first layer outside the optimizer, a gradient norm over the
    # parameters that have a gradient, clipping, and an EMA copy updated in place.
    "gradient accumulation, frozen layer, EMA copy, Python-number loss weights": """
        import copy
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2))
        ema = copy.deepcopy(model)
        for p in ema.parameters():
            p.requires_grad_(False)
        for p in model[0].parameters():
            p.requires_grad = False
        optimizer = torch.optim.AdamW(model[2].parameters(), 1e-3)
        accumulation, running, norms = 2, 0.0, []
        for step in range(4):
            x, y = torch.randn(4, 8), torch.randn(4, 2)
            beta = min(1.0, step / 10)
            loss = F.mse_loss(model(x), y) + beta * model(x).abs().mean()
            (loss / accumulation).backward()
            running += loss.item()
            if (step + 1) % accumulation == 0:
                norms.append(sum(p.grad.norm() ** 2 for p in model.parameters() if p.grad is not None))
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
                with torch.no_grad():
                    for e, p in zip(ema.parameters(), model.parameters()):
                        e.mul_(0.99).add_(p.detach(), alpha=0.01)
        # later in the schedule the first layer is unfrozen and joins as its own group
        for p in model[0].parameters():
            p.requires_grad = True
        optimizer.add_param_group({"params": model[0].parameters(), "lr": 1e-4})
        for _ in range(2):
            optimizer.zero_grad()
            F.mse_loss(model(torch.randn(4, 8)), torch.randn(4, 2)).backward()
            optimizer.step()
        grads = [p.grad for p in model.parameters()] + [p.clone() for p in ema.parameters()] + norms
    """,
    # A new head replaces the old one and the optimizer is built again after it.
    "head replaced, optimizer rebuilt after": """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2))
        optimizer = torch.optim.SGD(model.parameters(), 0.1)
        optimizer.zero_grad()
        model(torch.randn(4, 8)).sum().backward()
        optimizer.step()
        model[2] = nn.Linear(8, 3)
        optimizer = torch.optim.SGD(model.parameters(), 0.1, momentum=0.9)
        for _ in range(2):
            optimizer.zero_grad()
            model(torch.randn(4, 8)).pow(2).sum().backward()
            optimizer.step()
        grads = [p.grad for p in model.parameters()]
    """,
    # Actor-critic with target networks: the target under no_grad, two optimizers, a delayed
    # actor update, soft target updates written through .data, a hard copy by load_state_dict.
    "actor-critic with target networks and soft updates": """
        import copy
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        torch.manual_seed(0)
        actor = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 1), nn.Tanh())
        critic = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
        actor_target, critic_target = copy.deepcopy(actor), copy.deepcopy(critic)
        actor_optimizer = torch.optim.Adam(actor.parameters(), 3e-4)
        critic_optimizer = torch.optim.Adam(critic.parameters(), 3e-4)
        for it in range(4):
            state, next_state = torch.randn(8, 3), torch.randn(8, 3)
            action, reward, not_done = torch.rand(8, 1) * 2 - 1, torch.randn(8, 1), torch.ones(8, 1)
            with torch.no_grad():
                noise = (torch.randn_like(action) * 0.2).clamp(-0.5, 0.5)
                next_action = (actor_target(next_state) + noise).clamp(-1, 1)
                target_q = reward + not_done * 0.99 * critic_target(torch.cat([next_state, next_action], 1))
            current_q = critic(torch.cat([state, action], 1))
            critic_loss = F.mse_loss(current_q, target_q)
            critic_optimizer.zero_grad()
            critic_loss.backward()
            critic_optimizer.step()
            if it % 2 == 0:
                actor_loss = -critic(torch.cat([state, actor(state)], 1)).mean()
                actor_optimizer.zero_grad()
                actor_loss.backward()
                actor_optimizer.step()
                for param, target_param in zip(critic.parameters(), critic_target.parameters()):
                    target_param.data.copy_(0.005 * param.data + 0.995 * target_param.data)
            if it == 3:
                actor_target.load_state_dict(actor.state_dict())
        grads = [p.grad for p in critic.parameters()] + [p.grad for p in actor.parameters()]
        grads = grads + [p.clone() for p in critic_target.parameters()]
    """,
    # WGAN-GP: a gradient penalty through autograd.grad(create_graph=True), two optimizers.
    "WGAN gradient penalty": """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        G, D = nn.Linear(4, 8), nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Linear(8, 1))
        optimizer_g = torch.optim.Adam(G.parameters(), 1e-4, betas=(0.0, 0.9))
        optimizer_d = torch.optim.Adam(D.parameters(), 1e-4, betas=(0.0, 0.9))
        lambda_gp = 10
        for _ in range(2):
            real, fake = torch.randn(6, 8), G(torch.randn(6, 4))
            alpha = torch.rand(6, 1)
            interpolates = (alpha * real + (1 - alpha) * fake.detach()).requires_grad_(True)
            gradients = torch.autograd.grad(D(interpolates).sum(), interpolates, create_graph=True)[0]
            penalty = ((gradients.norm(2, dim=1) - 1) ** 2).mean()
            loss_d = D(fake.detach()).mean() - D(real).mean() + lambda_gp * penalty
            optimizer_d.zero_grad()
            loss_d.backward()
            optimizer_d.step()
            loss_g = -D(G(torch.randn(6, 4))).mean()
            optimizer_g.zero_grad()
            loss_g.backward()
            optimizer_g.step()
        grads = [p.grad for p in D.parameters()] + [p.grad for p in G.parameters()]
    """,
    # A language model trained with truncated BPTT (the hidden state detached between
    # batches), clipping, and a hand-written SGD step on the parameters through .data.
    "truncated BPTT with a hand-written SGD step": """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        torch.manual_seed(0)
        encoder, rnn, decoder = nn.Embedding(20, 8), nn.LSTM(8, 8), nn.Linear(8, 20)
        parameters = [*encoder.parameters(), *rnn.parameters(), *decoder.parameters()]
        data = torch.randint(0, 20, (31, 2))
        hidden = (torch.zeros(1, 2, 8), torch.zeros(1, 2, 8))
        lr = 20.0
        for i in range(0, 30, 10):
            inputs, targets = data[i:i + 10], data[i + 1:i + 11]
            for p in parameters:
                p.grad = None
            hidden = tuple(h.detach() for h in hidden)
            output, hidden = rnn(encoder(inputs), hidden)
            loss = F.cross_entropy(decoder(output).view(-1, 20), targets.reshape(-1))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(parameters, 0.25)
            for p in parameters:
                p.data.add_(p.grad, alpha=-lr)
        grads = [p.grad for p in parameters] + [p.detach().clone() for p in parameters]
    """,
    # Self-supervised momentum target: the target's projection in a function decorated with
    # @torch.no_grad(), the momentum update rebinding each target parameter's .data, a buffer
    # rescaled in place after the step, and tied weights set before the optimizer.
    "momentum target from a @torch.no_grad() function, tied weights": """
        import copy
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        torch.manual_seed(0)
        online, predictor = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 8)), nn.Linear(8, 8)
        target = copy.deepcopy(online)
        for p in target.parameters():
            p.requires_grad = False

        @torch.no_grad()
        def target_projection(x):
            return F.normalize(target(x), dim=-1)

        @torch.no_grad()
        def momentum_update(m=0.99):
            for po, pt in zip(online.parameters(), target.parameters()):
                pt.data = pt.data * m + po.data * (1 - m)

        class Scaled(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(8, 8)
                self.register_buffer("scale", torch.ones(8))

            def forward(self, x):
                return self.lin(x) * self.scale

        extra = Scaled()
        embedding, decoder = nn.Embedding(10, 8), nn.Linear(8, 10, bias=False)
        decoder.weight = embedding.weight
        optimizer = torch.optim.SGD([*online.parameters(), *predictor.parameters(), *extra.parameters(),
                                     *embedding.parameters()], 0.05, momentum=0.9)
        for _ in range(3):
            x1, x2 = torch.randn(6, 8), torch.randn(6, 8)
            p1 = F.normalize(predictor(online(x1)), dim=-1)
            loss = 2 - 2 * (p1 * target_projection(x2)).sum(-1).mean() + 0.1 * extra(x1).pow(2).mean()
            loss = loss + F.cross_entropy(decoder(embedding(torch.randint(0, 10, (4,)))), torch.randint(0, 10, (4,)))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            momentum_update()
            extra.scale.mul_(0.9)
        grads = [p.grad for p in online.parameters()] + [p.grad for p in embedding.parameters()]
        grads = grads + [p.clone() for p in target.parameters()]
    """,
    # L-BFGS calls the closure several times per step; each builds and backpropagates a graph.
    "L-BFGS with a closure": """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        cell, head = nn.LSTMCell(1, 8), nn.Linear(8, 1)
        optimizer = torch.optim.LBFGS([*cell.parameters(), *head.parameters()], lr=0.8)
        series = torch.sin(torch.linspace(0, 6, 12)).view(1, 12)

        def closure():
            optimizer.zero_grad()
            h, c = torch.zeros(1, 8), torch.zeros(1, 8)
            outputs = []
            for t in range(11):
                h, c = cell(series[:, t:t + 1], (h, c))
                outputs.append(head(h))
            loss = ((torch.cat(outputs, 1) - series[:, 1:]) ** 2).mean()
            loss.backward()
            return loss

        for _ in range(2):
            optimizer.step(closure)
        grads = [p.grad for p in cell.parameters()] + [p.detach().clone() for p in head.parameters()]
    """,
    # A finite-difference check of a training step (meta-learning test suites): each call
    # copies the model, builds a fresh optimizer, clears, takes one step and returns a loss
    # whose graph keeps that copy alive. A later optimizer gets the id of one already freed
    # (under some allocation orders), whose copy still holds the gradients its step applied.
    "one fresh optimizer per finite-difference step": """
        import copy
        import torch
        import torch.nn as nn

        def one_step(module, batches):
            optimizer = torch.optim.Adam(module.parameters(), lr=0.1)
            ids.append(id(optimizer))
            optimizer.zero_grad()
            module(batches[0]).pow(2).sum().backward()
            optimizer.step()
            return module(batches[1]).pow(2).sum()

        torch.manual_seed(0)
        model = nn.Linear(4, 3)
        batches = [torch.rand(10, 4) for _ in range(2)]
        ids, losses = [], []
        for start in range(8):
            losses.append(one_step(copy.deepcopy(model), batches))
            with torch.no_grad():
                model.weight.add_(1e-3)
        grads = [torch.stack(losses).detach()]
    """,
    # Bayesian layers: the base module runs with sampled tensors put in place of its parameters
    # (a stateless reparametrization); the loss reaches the means and log-variances, never the
    # base's own parameters, which took no part.
    "a module run with sampled tensors in place of its parameters": """
        import torch
        import torch.nn as nn

        class Bayesian(nn.Module):
            def __init__(self, base):
                super().__init__()
                self.base = base
                names = [name.replace(".", "-") for name, _ in base.named_parameters()]
                self.means = nn.ParameterDict({n: nn.Parameter(p.detach().clone())
                                               for n, p in zip(names, base.parameters())})
                self.logvars = nn.ParameterDict({n: nn.Parameter(torch.full_like(p, -6.0))
                                                 for n, p in zip(names, base.parameters())})

            def sample(self):
                return {k.replace("-", "."): m + (0.5 * self.logvars[k]).exp() * torch.randn_like(m)
                        for k, m in self.means.items()}

        torch.manual_seed(0)
        model = Bayesian(nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 2)))
        optimizer = torch.optim.Adam([*model.means.parameters(), *model.logvars.parameters()], lr=1e-2)
        for step in range(3):
            with torch.nn.utils.stateless._reparametrize_module(model.base, model.sample()):
                out = model.base(torch.randn(5, 3))
            loss = out.pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        assert all(p.grad is None for p in model.base.parameters())
        grads = [p.grad for p in model.means.parameters()] + [p.grad for p in model.logvars.parameters()]
    """,
    # A module that holds a parameter its forward never reads (kept for another configuration):
    # that parameter gets no gradient because it takes no part, not because a path was cut.
    "a parameter the module's forward never reads": """
        import torch
        import torch.nn as nn

        class PartlyUsed(nn.Module):
            def __init__(self):
                super().__init__()
                self.used = nn.Parameter(torch.rand(4, 3))
                self.spare = nn.Parameter(torch.rand(4, 3))

            def forward(self, x):
                return x @ self.used

        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 4), PartlyUsed())
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(3):
            optimizer.zero_grad()
            model(torch.rand(10, 4)).pow(2).sum().backward()
            optimizer.step()
        grads = [p.grad for p in model.parameters() if p.grad is not None] + [p.detach().clone() for p in model.parameters()]
    """,
    # torchjd's test architecture (docs/real-code.md, seventh set): a module computes with a frozen
    # weight on inputs without grad and holds a trainable weight it never reads; its result has no
    # graph, and the next module's result carries it into the loss. Nothing was cut: the spare
    # weight took no part (its buggy twin, the result detached after a forward that used it, is
    # test_a_used_parameter_cut_after_a_frozen_module_is_still_reported below).
    "a module whose frozen weight makes a result without graph, and an unused trainable weight": """
        import torch
        import torch.nn as nn

        class FrozenAndSpare(nn.Module):
            def __init__(self):
                super().__init__()
                self.frozen = nn.Parameter(torch.rand(6, 4), requires_grad=False)
                self.spare = nn.Parameter(torch.rand(6, 4))

            def forward(self, x):
                return x @ self.frozen

        torch.manual_seed(0)
        model = nn.Sequential(FrozenAndSpare(), nn.Linear(4, 2))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(3):
            optimizer.zero_grad()
            model(torch.rand(10, 6)).pow(2).sum().backward()
            optimizer.step()
        grads = [p.grad for p in model.parameters() if p.grad is not None] + [p.detach().clone() for p in model.parameters()]
    """,
    # A schedule-free optimizer (schedule_free): step() writes the parameters themselves with
    # in-place lerp_ and _foreach_ updates, and train()/eval() move them between two points in
    # place, with an evaluation under no_grad at the averaged point in between.
    "schedule-free optimizer moving the parameters in place between train and eval points": """
        import torch
        import torch.nn as nn

        class ScheduleFreeSGD(torch.optim.Optimizer):
            def __init__(self, params, lr=0.1, momentum=0.9):
                super().__init__(params, dict(lr=lr, momentum=momentum, train_mode=True, k=0))

            @torch.no_grad()
            def eval(self):
                for group in self.param_groups:
                    if group["train_mode"]:
                        for p in group["params"]:
                            if "z" in self.state[p]:
                                p.lerp_(self.state[p]["z"], 1 - 1 / group["momentum"])
                        group["train_mode"] = False

            @torch.no_grad()
            def train(self):
                for group in self.param_groups:
                    if not group["train_mode"]:
                        for p in group["params"]:
                            if "z" in self.state[p]:
                                p.lerp_(self.state[p]["z"], 1 - group["momentum"])
                        group["train_mode"] = True

            @torch.no_grad()
            def step(self):
                for group in self.param_groups:
                    group["k"] += 1
                    weight = 1 / group["k"]
                    params = [p for p in group["params"] if p.grad is not None]
                    zs = [self.state[p].setdefault("z", p.detach().clone()) for p in params]
                    grads = [p.grad for p in params]
                    torch._foreach_lerp_(params, zs, weight)  # y towards z
                    torch._foreach_add_(params, grads, alpha=group["lr"] * (group["momentum"] * (1 - weight) - 1))
                    torch._foreach_sub_(zs, grads, alpha=group["lr"])

        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
        optimizer = ScheduleFreeSGD(model.parameters())
        evaluated = []
        for epoch in range(2):
            model.train()
            optimizer.train()
            for _ in range(3):
                optimizer.zero_grad()
                nn.functional.mse_loss(model(torch.randn(6, 4)), torch.randn(6, 1)).backward()
                optimizer.step()
            model.eval()
            optimizer.eval()
            with torch.no_grad():
                evaluated.append(model(torch.ones(2, 4)))
        grads = [p.grad for p in model.parameters()] + [p.detach().clone() for p in model.parameters()] + evaluated
    """,
    # Self-supervised training (lightly): negatives from a memory bank that is read as a copy
    # and then overwritten in place with the batch's detached outputs before backward; a
    # momentum teacher updated by in-place lerps of its parameters; a DINO-style centre buffer
    # used in the loss and updated in place by an EMA inside the loss's forward.
    "memory bank written after it was read, momentum teacher, centre updated by an EMA": """
        import copy
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        class MemoryBank(nn.Module):
            def __init__(self, size, dim):
                super().__init__()
                self.register_buffer("bank", F.normalize(torch.randn(size, dim), dim=1))
                self.pointer = 0

            @torch.no_grad()
            def push(self, batch):
                end = self.pointer + batch.shape[0]
                self.bank[self.pointer:end] = batch.detach()
                self.pointer = end % self.bank.shape[0]

            def forward(self, output, update=True):
                negatives = self.bank.clone().detach()
                if update:
                    self.push(output)
                return output, negatives

        class CentredLoss(nn.Module):
            def __init__(self, dim):
                super().__init__()
                self.register_buffer("center", torch.zeros(1, dim))

            def forward(self, teacher, student):
                target = F.softmax((teacher - self.center) / 0.04, dim=-1)
                loss = -(target * F.log_softmax(student / 0.1, dim=-1)).sum(-1).mean()
                with torch.no_grad():
                    self.center.mul_(0.9).add_(teacher.mean(0, keepdim=True), alpha=0.1)
                return loss

        torch.manual_seed(0)
        student = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 8))
        teacher = copy.deepcopy(student)
        for p in teacher.parameters():
            p.requires_grad = False
        bank, centred = MemoryBank(12, 8), CentredLoss(8)
        optimizer = torch.optim.SGD(student.parameters(), lr=0.05, momentum=0.9)
        for step in range(4):
            view_a, view_b = torch.randn(4, 6), torch.randn(4, 6)
            query = F.normalize(student(view_a), dim=1)
            with torch.no_grad():
                key = F.normalize(teacher(view_b), dim=1)
            key, negatives = bank(key)
            logits = torch.cat([(query * key).sum(1, keepdim=True), query @ negatives.T], dim=1)
            loss = F.cross_entropy(logits / 0.2, torch.zeros(4, dtype=torch.long))
            loss = loss + centred(teacher(view_a), student(view_b))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            with torch.no_grad():
                for ema, online in zip(teacher.parameters(), student.parameters()):
                    ema.lerp_(online, 0.01)
        grads = [p.grad for p in student.parameters()] + [p.detach().clone() for p in teacher.parameters()]
        grads = grads + [bank.bank.clone(), centred.center.clone()]
    """,
    # Adversarial training (torchensemble's FGSM): requires_grad set on each batch, a first
    # backward() for the input's gradient (the parameters' gradients it leaves are cleared by
    # zero_grad() before any step), then the clean and perturbed batches trained on together.
    "adversarial training on FGSM examples": """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(5, 12), nn.ReLU(), nn.Linear(12, 3))
        optimizer = torch.optim.Adam(model.parameters(), 1e-2)
        for step in range(3):
            data, target = torch.randn(8, 5), torch.randint(0, 3, (8,))
            data.requires_grad = True
            F.cross_entropy(model(data), target).backward()
            adversarial = (data + 0.1 * data.grad.data.sign()).clamp(-3, 3)
            optimizer.zero_grad()
            loss = F.cross_entropy(model(data), target) + F.cross_entropy(model(adversarial), target)
            loss.backward()
            optimizer.step()
        grads = [p.grad for p in model.parameters()] + [p.detach().clone() for p in model.parameters()]
    """,
    # A deep-equilibrium layer (torchdeq's hook IFT): the fixed point is found under no_grad,
    # one differentiable step is taken from it, and a hook on that step's output removes itself
    # and solves the backward fixed point with autograd.grad(retain_graph=True) inside backward.
    "deep-equilibrium layer, implicit gradient from a tensor hook": """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        layer, inject, head = nn.Linear(8, 8, bias=False), nn.Linear(3, 8), nn.Linear(8, 1)
        parameters = [*layer.parameters(), *inject.parameters(), *head.parameters()]
        optimizer = torch.optim.Adam(parameters, lr=1e-2)
        hooks = []
        for step in range(3):
            x = torch.randn(5, 3)
            injection = inject(x)
            f = lambda z: torch.tanh(0.5 * layer(z) + injection)
            with torch.no_grad():
                z = torch.zeros(5, 8)
                for _ in range(30):
                    z = f(z)
            z = z.requires_grad_()
            new_z = f(z)

            def backward_hook(grad):
                hooks.pop().remove()
                solution = torch.zeros_like(grad)
                for _ in range(30):
                    solution = torch.autograd.grad(new_z, z, solution, retain_graph=True)[0] + grad
                return solution

            hooks.append(new_z.register_hook(backward_hook))
            loss = (head(new_z) - x.sum(1, keepdim=True).sin()).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        grads = [p.grad for p in parameters] + [p.detach().clone() for p in parameters]
    """,
    # A liquid time-constant cell (ncps, explicit constraints): the state is carried across
    # truncated sequences with its graph cut, and after each step four parameters are clipped
    # by assigning a new tensor to their .data.
    "recurrent cell whose parameters are clipped through .data after each step": """
        import torch
        import torch.nn as nn

        class Cell(nn.Module):
            def __init__(self):
                super().__init__()
                self.w = nn.Parameter(torch.rand(6, 6))
                self.sensory_w = nn.Parameter(torch.rand(2, 6))
                self.cm = nn.Parameter(torch.rand(6) + 0.5)
                self.gleak = nn.Parameter(torch.rand(6))

            def forward(self, x, h):
                for _ in range(3):  # ODE unfolds
                    pull = torch.sigmoid(h @ self.w + x @ self.sensory_w)
                    h = (self.cm * h + pull) / (self.cm + self.gleak + 1e-8)
                return h

        torch.manual_seed(0)
        cell, readout = Cell(), nn.Linear(6, 1)
        optimizer = torch.optim.Adam([*cell.parameters(), *readout.parameters()], lr=1e-2)
        series = torch.stack([torch.sin(torch.linspace(0, 6, 16)), torch.cos(torch.linspace(0, 6, 16))], -1)
        for step in range(3):
            h, loss = torch.zeros(1, 6), 0.0
            for part in (range(0, 8), range(8, 16)):
                for t in part:
                    h = cell(series[t:t + 1], h)
                    loss = loss + (readout(h) - series[t, 0] * series[t, 1]).pow(2).sum()
                h = h.detach()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            for name in ("w", "sensory_w", "cm", "gleak"):
                getattr(cell, name).data = nn.functional.relu(getattr(cell, name).data)
        grads = [p.grad for p in cell.parameters()] + [p.detach().clone() for p in cell.parameters()]
    """,
    # A physics-informed network (DeepXDE's inverse problems): the residual differentiates the
    # network with respect to its input with create_graph, an unknown coefficient of the
    # equation is a trainable scalar in the optimizer beside the network, and L-BFGS follows Adam.
    "physics-informed residual with a trainable coefficient, Adam then L-BFGS": """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        net = nn.Sequential(nn.Linear(1, 12), nn.Tanh(), nn.Linear(12, 12), nn.Tanh(), nn.Linear(12, 1))
        coefficient = torch.tensor(0.5, requires_grad=True)
        observed_t = torch.linspace(0, 1, 5).unsqueeze(1)
        observed = torch.exp(1.5 * observed_t)

        def loss_fn():
            t = torch.rand(16, 1).requires_grad_()
            y = net(t)
            dy = torch.autograd.grad(y, t, torch.ones_like(y), create_graph=True)[0]
            d2y = torch.autograd.grad(dy, t, torch.ones_like(dy), create_graph=True)[0]
            residual = dy - coefficient * y + 1e-3 * d2y
            return residual.pow(2).mean() + (net(observed_t) - observed).pow(2).mean()

        adam = torch.optim.Adam([*net.parameters(), coefficient], lr=1e-2)
        for step in range(4):
            adam.zero_grad()
            loss_fn().backward()
            adam.step()
        lbfgs = torch.optim.LBFGS([*net.parameters(), coefficient], lr=0.5, max_iter=5)

        def closure():
            lbfgs.zero_grad()
            loss = loss_fn()
            loss.backward()
            return loss

        lbfgs.step(closure)
        grads = [p.grad for p in net.parameters()] + [coefficient.grad, coefficient.detach().clone()]
    """,
    # An optimisation layer (qpth, cvxpylayers): a custom Function whose forward solves a linear
    # system and keeps the LU factors on ctx as plain attributes for its backward, which solves
    # the transposed system; beside it a relaxed comparison (diffsort's NormalCDF) whose forward
    # and backward are written without @staticmethod and which saves a tensor it makes itself.
    "a linear-solve layer keeping its LU factors on ctx, a relaxation without staticmethod": """
        import math
        import torch

        class SolveLayer(torch.autograd.Function):
            @staticmethod
            def forward(ctx, matrix, rhs):
                ctx.factors, ctx.pivots = torch.linalg.lu_factor(matrix)
                solution = torch.linalg.lu_solve(ctx.factors, ctx.pivots, rhs)
                ctx.save_for_backward(solution)
                return solution

            @staticmethod
            def backward(ctx, grad_solution):
                (solution,) = ctx.saved_tensors
                grad_rhs = torch.linalg.lu_solve(ctx.factors, ctx.pivots, grad_solution, adjoint=True)
                return -grad_rhs @ solution.transpose(-2, -1), grad_rhs

        class SoftStep(torch.autograd.Function):
            def forward(ctx, x, width):
                ctx.save_for_backward(x, torch.tensor(width))
                return 0.5 + 0.5 * torch.erf(x / width / math.sqrt(2))

            def backward(ctx, grad_y):
                x, width = ctx.saved_tensors
                return grad_y / width / math.sqrt(2 * math.pi) * torch.exp(-0.5 * (x / width) ** 2), None

        torch.manual_seed(0)
        scorer = torch.nn.Linear(3, 4)
        optimizer = torch.optim.Adam(scorer.parameters(), lr=1e-2)
        for step in range(3):
            features = torch.randn(2, 3)
            scores = scorer(features)
            matrix = torch.eye(4) * 3 + 0.1 * scores.unsqueeze(-1) * scores.unsqueeze(-2)
            solution = SolveLayer.apply(matrix, scores.unsqueeze(-1))
            gaps = scores.unsqueeze(-1) - scores.unsqueeze(-2)
            loss = solution.pow(2).sum() + SoftStep.apply(gaps, 0.5).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        grads = [p.grad for p in scorer.parameters()] + [p.detach().clone() for p in scorer.parameters()]
    """,
    # A dual-averaging optimizer written by hand (madgrad): its step writes the parameters through
    # `p.data.copy_` from the initial point and the running sums; an embedding with sparse
    # gradients is stepped on the rows the batch touched (`sparse_mask`, `_values()` written).
    "dual averaging written by hand, dense and sparse gradients": """
        import torch

        class DualAveraging(torch.optim.Optimizer):
            def __init__(self, params, lr=1e-2):
                super().__init__(params, dict(lr=lr))

            @torch.no_grad()
            def step(self):
                for group in self.param_groups:
                    for p in group["params"]:
                        state = self.state[p]
                        if not state:
                            state["start"] = p.data.clone()
                            state["sum"] = torch.zeros_like(p.data)
                            state["squares"] = torch.zeros_like(p.data)
                        grad = p.grad.data
                        if grad.is_sparse:
                            grad = grad.coalesce()
                            rows = grad._indices()[0].unique()
                            state["sum"].index_add_(0, grad._indices()[0], grad._values() * group["lr"])
                            state["squares"].index_add_(0, grad._indices()[0], grad._values().pow(2) * group["lr"])
                            scale = state["squares"][rows].pow(1 / 3).add_(1e-6)
                            p.data[rows] = state["start"][rows] - state["sum"][rows] / scale
                        else:
                            state["sum"].add_(grad, alpha=group["lr"])
                            state["squares"].addcmul_(grad, grad, value=group["lr"])
                            scale = state["squares"].pow(1 / 3).add_(1e-6)
                            p.data.copy_(state["start"]).addcdiv_(state["sum"], scale, value=-1)

        torch.manual_seed(0)
        embedding = torch.nn.Embedding(20, 4, sparse=True)
        head = torch.nn.Linear(4, 2)
        optimizers = [DualAveraging(embedding.parameters(), lr=5e-2), DualAveraging(head.parameters(), lr=5e-2)]
        for step in range(4):
            tokens, labels = torch.randint(0, 20, (6, 3)), torch.randint(0, 2, (6,))
            loss = torch.nn.functional.cross_entropy(head(embedding(tokens).mean(1)), labels)
            for optimizer in optimizers:
                optimizer.zero_grad()
            loss.backward()
            for optimizer in optimizers:
                optimizer.step()
        grads = [head.weight.grad, head.bias.grad, embedding.weight.grad.to_dense()]
        grads = grads + [p.detach().clone() for p in (*embedding.parameters(), *head.parameters())]
    """,
    # Manifold optimisation (McTorch): a Parameter subclass registers a tensor hook on itself
    # that keeps the gradient projected onto the tangent space, and the step retracts the
    # parameter onto the manifold (here the unit sphere) through .data.
    "a parameter's own hook keeps a projected gradient, the step retracts through .data": """
        import weakref
        import torch

        class SphereParameter(torch.nn.Parameter):
            def __new__(cls, data):
                return torch.nn.Parameter._make_subclass(cls, data / data.norm(), True)

            def __init__(self, data):
                self.tangent_grad = None
                owner = weakref.ref(self)

                def project(grad):
                    point = owner()
                    point.tangent_grad = grad - (grad * point.data).sum() * point.data

                self.register_hook(project)

        torch.manual_seed(0)
        point = SphereParameter(torch.randn(3))
        target = torch.tensor([0.0, 0.6, 0.8])
        for _ in range(5):
            loss = (point - target).pow(2).sum()
            loss.backward()
            moved = point.data - 0.3 * point.tangent_grad
            point.data.add_(moved / moved.norm() - point.data)
            point.grad = None
        grads = [point.detach().clone(), point.tangent_grad]
    """,
    # Entropic optimal transport (GeomLoss): the Sinkhorn iterations run with autograd switched
    # off, then one last iteration with it on and the other side's potential detached, so the
    # gradient is the envelope theorem's; the points flow along it, updated in place.
    "Sinkhorn iterations with autograd off, one last step with it on": """
        import torch

        def softmin(eps, cost, h):
            return -eps * (h - cost / eps).logsumexp(dim=1)

        torch.manual_seed(0)
        x = torch.rand(8, 2).requires_grad_(True)
        y = torch.rand(9, 2) + 0.5
        a_log, b_log = torch.zeros(8).log_softmax(0), torch.zeros(9).log_softmax(0)  # uniform weights
        eps = 0.1
        for _ in range(3):
            cost_xy = (x[:, None, :] - y[None, :, :].detach()).pow(2).sum(-1) / 2
            torch.autograd.set_grad_enabled(False)
            f, g = torch.zeros(8), torch.zeros(9)
            for _ in range(20):
                f = softmin(eps, cost_xy, b_log + g / eps)
                g = softmin(eps, cost_xy.T, a_log + f / eps)
            torch.autograd.set_grad_enabled(True)
            f = softmin(eps, cost_xy, (b_log + g / eps).detach())
            loss = (a_log.exp() * f).sum() + (b_log.exp() * g).sum()
            gradient, = torch.autograd.grad(loss, x)
            with torch.no_grad():
                x -= 2.0 * gradient
        grads = [x.detach().clone(), gradient]
    """,
    # Structured pruning (Torch-Pruning): a sparsity regulariser added into .grad between
    # backward() and step(), then layers given new, narrower Parameters that carry the old
    # gradient, and a new optimizer built over them for fine-tuning.
    "pruned layers given new parameters, a new optimizer built after": """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
        x, y = torch.randn(12, 6), torch.randint(0, 3, (12,))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(3):
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            model[0].weight.grad.data += 1e-2 * model[0].weight.data.sign()
            optimizer.step()

        def narrowed(weight, keep, dim):
            kept = nn.Parameter(torch.index_select(weight, dim, keep))
            kept.grad = torch.index_select(weight.grad, dim, keep)
            return kept

        keep = model[0].weight.norm(dim=1).argsort(descending=True)[:5].sort().values
        model[0].weight, model[0].bias = narrowed(model[0].weight, keep, 0), narrowed(model[0].bias, keep, 0)
        model[2].weight = narrowed(model[2].weight, keep, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        for _ in range(3):
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        grads = [p.grad for p in model.parameters()] + [p.detach().clone() for p in model.parameters()]
    """,
    # Signal reconstruction by gradient descent on the input (kymatio's example): a new leaf per
    # step made under no_grad and given requires_grad, the step size braked when the loss went
    # up, then the step retried from the old leaf with its .grad of the earlier backward().
    "input recovered by a bold-driver descent, a new leaf per step": """
        import torch

        torch.manual_seed(0)
        features = torch.nn.Conv1d(1, 4, 5, bias=False).requires_grad_(False)
        target = features(torch.randn(1, 1, 32)).abs()
        y = torch.randn(1, 1, 32, requires_grad=True)
        coefficients = features(y).abs()
        learning_rate, history, tried = 8.0, [], []  # steps rejected (k = 2, 3, 5, 7) and taken
        for k in range(8):
            error = torch.norm(target - coefficients)
            history.append(error.detach())
            torch.autograd.backward(error)
            with torch.no_grad():
                new_y = y - learning_rate * y.grad
            new_y.requires_grad = True
            coefficients = features(new_y).abs()
            tried.append(new_y)
            if history[k] > history[k - 1]:
                learning_rate *= 0.55
            else:
                learning_rate *= 1.1
                y = new_y
        grads = [y.detach().clone(), torch.stack(history)] + [t.grad for t in tried[:-1]]
    """,
    # A custom Function (pytorch-softdtw-cuda's CPU path) whose forward computes its table from
    # a detached NumPy copy of the input and saves the input, the table and two scalar tensors
    # made inside forward with save_for_backward; backward recomputes from the saved ones.
    "a Function saving tensors it made in forward, computed from a detached copy": """
        import numpy as np
        import torch

        class CumulativeSoftMin(torch.autograd.Function):
            @staticmethod
            def forward(ctx, distances, gamma):
                gamma = torch.Tensor([gamma]).to(distances.dtype)
                d = distances.detach().numpy()
                table = np.zeros((d.shape[0], d.shape[1] + 1))
                for j in range(d.shape[1]):
                    table[:, j + 1] = -gamma.item() * np.logaddexp(-table[:, j] / gamma.item(), -d[:, j] / gamma.item())
                table = torch.from_numpy(table).to(distances.dtype)
                ctx.save_for_backward(distances, table, gamma)
                return table[:, -1]

            @staticmethod
            def backward(ctx, grad_output):
                distances, table, gamma = ctx.saved_tensors
                weights = torch.zeros_like(distances)
                carry = torch.ones(distances.shape[0], dtype=distances.dtype)
                for j in reversed(range(distances.shape[1])):
                    share = torch.sigmoid((table[:, j] - distances[:, j]) / gamma)
                    weights[:, j] = carry * share
                    carry = carry * (1 - share)
                return grad_output[:, None] * weights, None

        torch.manual_seed(0)
        model = torch.nn.Linear(3, 5)
        optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
        x = torch.randn(4, 3)
        for _ in range(3):
            optimizer.zero_grad()
            distances = (model(x) - 0.5) ** 2
            loss = CumulativeSoftMin.apply(distances, 0.5).mean()
            loss.backward()
            optimizer.step()
        grads = [p.grad for p in model.parameters()] + [p.detach().clone() for p in model.parameters()]
    """,
    # Hessian eigenvalues by power iteration (PyHessian): backward(create_graph=True) leaves
    # gradients with their graph in .grad, copied once and reused for every Hessian-vector
    # product (autograd.grad with retain_graph) while zero_grad() clears .grad between products;
    # the products are orthogonalised through .data; training goes on after the analysis.
    "Hessian-vector products from gradients kept with their graph, zero_grad between them": """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 3))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        x, y = torch.randn(16, 6), torch.randint(0, 3, (16,))
        model.eval()
        nn.functional.cross_entropy(model(x), y).backward(create_graph=True)
        params = list(model.parameters())
        grads_with_graph = [p.grad + 0.0 for p in params]
        found, eigenvalues = [], []
        for _ in range(2):
            v = [torch.randn_like(p) for p in params]
            for _ in range(6):
                for u in found:  # Gram-Schmidt against the eigenvectors found, in place through .data
                    dot = sum((a * b).sum() for a, b in zip(v, u))
                    for a, b in zip(v, u):
                        a.data.add_(b * -dot)
                norm = sum((a * a).sum() for a in v).sqrt().item()
                v = [a / (norm + 1e-6) for a in v]
                model.zero_grad()
                hv = torch.autograd.grad(grads_with_graph, params, grad_outputs=v, retain_graph=True)
                value = sum((a * b).sum() for a, b in zip(hv, v))
                v = list(hv)
            norm = sum((a * a).sum() for a in v).sqrt().item()
            found.append([a / (norm + 1e-6) for a in v])
            eigenvalues.append(value.detach())
        model.train()
        for _ in range(2):
            optimizer.zero_grad(set_to_none=True)
            nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
        grads = eigenvalues + [p.grad for p in params] + [p.detach().clone() for p in params]
    """,
    # mup: a readout that shares the embedding's weight and divides its input by a width
    # multiplier, parameters rescaled through .data before the optimizer is built, per-group
    # learning rates scaled by width, forward hooks recording each module's output size
    # during the first steps (a coordinate check) and removed after each step.
    "readout tied to the embedding, width-scaled groups, coordinate-check hooks": """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        class TiedLM(nn.Module):
            def __init__(self, width, vocab=11, base_width=4):
                super().__init__()
                self.embed = nn.Embedding(vocab, width)
                self.hidden = nn.Linear(width, width)
                self.readout = nn.Linear(width, vocab, bias=False)
                self.readout.weight = self.embed.weight
                self.width_mult = width / base_width
                self.hidden.weight.data *= self.width_mult ** -0.5

            def forward(self, tokens):
                h = F.gelu(self.hidden(self.embed(tokens)))
                return self.readout(h / self.width_mult)

        torch.manual_seed(0)
        model = TiedLM(16)
        matrix_like = [p for n, p in model.named_parameters() if n.endswith("hidden.weight")]
        others = [p for n, p in model.named_parameters() if not n.endswith("hidden.weight")]
        optimizer = torch.optim.AdamW([{"params": matrix_like, "lr": 1e-2 / model.width_mult},
                                       {"params": others, "lr": 1e-2}], weight_decay=0.01)
        tokens = torch.randint(0, 11, (3, 7))
        records = []
        for step in range(4):
            handles = [m.register_forward_hook(lambda m, i, o, name=name: records.append((name, o.detach().abs().mean())))
                       for name, m in model.named_modules() if step < 2]
            optimizer.zero_grad()
            logits = model(tokens[:, :-1])
            F.cross_entropy(logits.reshape(-1, 11), tokens[:, 1:].reshape(-1)).backward()
            optimizer.step()
            for handle in handles:
                handle.remove()
        grads = [p.grad for p in model.parameters()] + [p.detach().clone() for p in model.parameters()] + [r for _, r in records]
    """,
    # K-FAC (kfac-pytorch): a forward pre-hook keeps each layer's input and a full backward
    # hook its output gradient (both detached); before the step, each weight's .grad is
    # replaced in place by the gradient preconditioned with running Kronecker factors.
    "K-FAC preconditioning from module hooks, gradients replaced in place before step": """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(5, 6), nn.ReLU(), nn.Linear(6, 2))
        layers = [model[0], model[2]]
        inputs, output_grads, factors = {}, {}, {}
        for layer in layers:
            layer.register_forward_pre_hook(lambda m, args: inputs.__setitem__(m, args[0].detach()))
            layer.register_full_backward_hook(lambda m, gin, gout: output_grads.__setitem__(m, gout[0].detach()))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
        x, y = torch.randn(12, 5), torch.randn(12, 2)
        for step in range(3):
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            with torch.no_grad():
                for layer in layers:
                    a, g = inputs[layer], output_grads[layer] * x.shape[0]
                    A, G = a.t() @ a / len(a), g.t() @ g / len(g)
                    if layer in factors:
                        A = 0.9 * factors[layer][0] + 0.1 * A
                        G = 0.9 * factors[layer][1] + 0.1 * G
                    factors[layer] = (A, G)
                    A_inv = torch.linalg.inv(A + 0.1 * torch.eye(len(A)))
                    G_inv = torch.linalg.inv(G + 0.1 * torch.eye(len(G)))
                    layer.weight.grad.copy_(G_inv @ layer.weight.grad @ A_inv)
                    layer.bias.grad.copy_(G_inv @ layer.bias.grad)
            optimizer.step()
        grads = [p.grad for p in model.parameters()] + [p.detach().clone() for p in model.parameters()]
    """,
    # The forms next to the diagnoses widened on 6 December (AD168, AD183, AD184, AD214, AD301,
    # AD302, AD305), written as their correct programs are (branch silence-sweep3).
    # AD168: a non-reentrant checkpoint replays the dropout it drew (preserve_rng_state); a
    # reentrant one over a block in eval mode draws nothing.
    "checkpointed dropout block, non-reentrant; reentrant in eval mode": """
        import torch
        import torch.nn as nn
        from torch.utils.checkpoint import checkpoint

        torch.manual_seed(0)
        block = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.3), nn.ReLU())
        head = nn.Linear(8, 1)
        optimizer = torch.optim.SGD([*block.parameters(), *head.parameters()], lr=0.1)
        for step in range(3):
            hidden = checkpoint(block, torch.randn(4, 8), use_reentrant=False)
            optimizer.zero_grad()
            head(hidden).pow(2).mean().backward()
            optimizer.step()
        block.eval()
        x = torch.randn(4, 8, requires_grad=True)
        checkpoint(block, x, use_reentrant=True, preserve_rng_state=False).sum().backward()
        grads = [p.detach().clone() for p in block.parameters()] + [x.grad]
    """,
    # AD183: clipping after unscale_ without error_if_nonfinite under a GradScaler; the refusal of
    # non-finite gradients asked for in a loop that scales nothing.
    "GradScaler with unscale_ and clipping; error_if_nonfinite without a scaler": """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        model = nn.Linear(6, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        scaler = torch.amp.GradScaler("cpu")
        for step in range(4):
            with torch.autocast("cpu", dtype=torch.bfloat16):
                loss = model(torch.randn(5, 6)).float().pow(2).mean()
            optimizer.zero_grad()
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
        plain = nn.Linear(6, 1)
        plain_optimizer = torch.optim.SGD(plain.parameters(), lr=0.1)
        for step in range(3):
            plain_optimizer.zero_grad()
            plain(torch.randn(5, 6)).pow(2).mean().backward()
            torch.nn.utils.clip_grad_norm_(plain.parameters(), 1.0, error_if_nonfinite=True)
            plain_optimizer.step()
        grads = [p.detach().clone() for p in [*model.parameters(), *plain.parameters()]]
    """,
    # AD184: forces from cdist as a first derivative only; force matching (a second derivative)
    # through distances written out, which autograd differentiates twice.
    "cdist for forces without create_graph; force matching on written-out distances": """
        import torch

        torch.manual_seed(0)
        positions = torch.randn(7, 3, requires_grad=True)
        weight = torch.randn(1, requires_grad=True)
        energy = (weight * torch.cdist(positions, positions).pow(2)).sum()
        (forces,) = torch.autograd.grad(-energy, positions)
        target = torch.randn(7, 3)
        squared = (positions[:, None, :] - positions[None, :, :]).pow(2).sum(-1)
        (matched,) = torch.autograd.grad(-(weight * squared).sum(), positions, create_graph=True)
        (matched - target).pow(2).mean().backward()
        grads = [forces, weight.grad, positions.grad]
    """,
    # AD302: a state reset by a new tensor, a counter with no graph zeroed in place, and a
    # truncated-BPTT state detached and then zeroed in place.
    "state reset by a new tensor, counters and detached states zeroed in place": """
        import torch
        import torch.nn as nn

        class Leaky(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)
                self.register_buffer("mem", torch.zeros(2, 4))
                self.register_buffer("steps_seen", torch.zeros(()))

            def reset(self):
                self.mem = torch.zeros_like(self.mem)
                with torch.no_grad():
                    self.steps_seen.zero_()

            def forward(self, x):
                self.mem = 0.9 * self.mem + self.fc(x)
                with torch.no_grad():
                    self.steps_seen += 1
                return self.mem

        torch.manual_seed(0)
        net = Leaky()
        optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
        for episode in range(3):
            net.reset()
            out = sum(net(torch.randn(2, 4)) for _ in range(4))
            optimizer.zero_grad()
            out.pow(2).mean().backward()
            optimizer.step()
        state = torch.zeros(2, 4)
        for chunk in range(4):
            state = state.detach()
            if chunk == 2:
                state.zero_()
            for _ in range(3):
                state = torch.tanh(net.fc(torch.randn(2, 4)) + state)
            optimizer.zero_grad()
            state.pow(2).mean().backward()
            optimizer.step()
        grads = [p.detach().clone() for p in net.parameters()]
    """,
    # AD301: the discriminator frozen by requires_grad_(False) for the generator's step (its
    # output, made while frozen, still carries the generator's gradient); an evaluation
    # closure decorated with no_grad.
    "GAN whose discriminator is frozen for the generator's step, no_grad evaluation": """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        generator = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 4))
        discriminator = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
        optim_g = torch.optim.Adam(generator.parameters(), 1e-3)
        optim_d = torch.optim.Adam(discriminator.parameters(), 1e-3)
        bce = nn.BCEWithLogitsLoss()

        @torch.no_grad()
        def evaluate():
            return discriminator(generator(torch.randn(8, 3))).mean().item()

        scores = []
        for step in range(3):
            fake = generator(torch.randn(8, 3))
            discriminator.requires_grad_(True)
            optim_d.zero_grad()
            loss_d = bce(discriminator(torch.randn(8, 4)), torch.ones(8, 1)) + bce(
                discriminator(fake.detach()), torch.zeros(8, 1))
            loss_d.backward()
            optim_d.step()
            discriminator.requires_grad_(False)
            optim_g.zero_grad()
            bce(discriminator(fake), torch.ones(8, 1)).backward()
            optim_g.step()
            scores.append(evaluate())
        grads = [p.grad for p in generator.parameters()] + [torch.tensor(scores)]
    """,
    # AD214: a backbone in the optimizer, frozen for a warm-up and unfrozen after it; AD305:
    # autograd.grad over an unused input asked for with allow_unused.
    "backbone unfrozen after a warm-up; autograd.grad with allow_unused": """
        import torch
        import torch.nn as nn

        torch.manual_seed(0)
        backbone = nn.Linear(5, 5)
        head = nn.Linear(5, 1)
        backbone.requires_grad_(False)
        optimizer = torch.optim.SGD([{"params": backbone.parameters(), "lr": 0.01},
                                     {"params": head.parameters()}], lr=0.1)
        for epoch in range(4):
            if epoch == 2:
                backbone.requires_grad_(True)
            loss = head(torch.relu(backbone(torch.randn(6, 5)))).pow(2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        a = torch.randn(3, requires_grad=True)
        b = torch.randn(3, requires_grad=True)
        grad_a, grad_b = torch.autograd.grad((a * 2).sum(), [a, b], allow_unused=True,
                                             materialize_grads=True)
        grads = [grad_a, grad_b] + [p.detach().clone() for p in backbone.parameters()]
    """,
}


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("name", sorted(CORRECT))
def test_correct_training_pattern_is_silent_and_unchanged(tmp_path, name, mode):
    plain = run_plain(tmp_path, CORRECT[name], "plain.py")
    outcome = run_program(tmp_path, CORRECT[name], **MODES[mode])
    assert outcome.error is None, outcome.error
    assert [d.code for d in outcome.diagnoses] == [] and outcome.warnings == []
    assert grads_equal(outcome.namespace["grads"], plain["grads"])


def test_an_entry_left_by_a_freed_optimizer_is_not_a_later_one_with_its_id():
    # CPython hands a freed optimizer's id to a later one (the program above does so under
    # some allocation orders); the entry kept for the first must not be read as the second's.
    import torch
    from autograd_doctor.recording.gradient_states import GradientStates

    states = GradientStates()
    weight = torch.nn.Parameter(torch.ones(3))
    first, second = torch.optim.SGD([weight], lr=0.1), torch.optim.SGD([weight], lr=0.1)
    weight.sum().backward()
    first.step()
    states.step_done(first)
    states.optimizers[id(second)] = states.optimizers.pop(id(first))  # second now has first's id
    states.backward_starting("the next backward")  # first's gradients are still there
    assert states.carried_into_step(second) is None
    states.step_done(first)
    states.backward_starting("another backward")
    assert states.carried_into_step(first).backward_call == "another backward"  # the real bug is still seen


def test_a_used_parameter_cut_after_a_frozen_module_is_still_reported(tmp_path):
    # The twin of the frozen-and-spare module above: the forward uses its trainable weight, and
    # the model detaches the result before the next module, so the loss never reaches it.
    source = """
        import torch
        import torch.nn as nn

        class FrozenAndTrained(nn.Module):
            def __init__(self):
                super().__init__()
                self.frozen = nn.Parameter(torch.rand(6, 4), requires_grad=False)
                self.trained = nn.Parameter(torch.rand(6, 4))

            def forward(self, x):
                return x @ self.frozen + x @ self.trained

        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.first = FrozenAndTrained()
                self.head = nn.Linear(4, 2)

            def forward(self, x):
                return self.head(self.first(x).detach())

        torch.manual_seed(0)
        model = Model()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(3):
            optimizer.zero_grad()
            model(torch.rand(10, 6)).pow(2).sum().backward()
            optimizer.step()
    """
    outcome = run_program(tmp_path, source)
    found = [d for d in outcome.diagnoses if d.code == "AD301"]
    assert len(found) == 1 and found[0].extra["parameters"] == ["model.first.trained"]


def test_a_memory_bank_read_without_a_copy_then_overwritten_is_still_reported(tmp_path):
    # The twin of the memory bank above: the loss multiplies by the bank itself (matmul saves
    # it for the query's gradient), and the push overwrites it before backward.
    outcome = run_program(tmp_path, """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        torch.manual_seed(0)
        student = nn.Linear(6, 8)
        bank = F.normalize(torch.randn(12, 8), dim=1)
        query = F.normalize(student(torch.randn(4, 6)), dim=1)
        logits = query @ bank.T
        with torch.no_grad():
            bank[0:4] = query.detach()  # WRITE
        F.cross_entropy(logits / 0.2, torch.zeros(4, dtype=torch.long)).backward()
    """)
    assert outcome.error is not None  # PyTorch refuses the backward, as without the doctor
    assert [d.code for d in outcome.diagnoses] == ["AD101"]
    assert outcome.diagnosis.primary.line == outcome.line("WRITE")
