"""Buggy programs, each with the diagnosis it gets and a hand-written correct version.

`compare` lists expressions evaluated in both programs' globals after they ran: the
gradients (and values) the fixed program must compute. `reference_for` gives another
reference for one help (by index) where that help is a different but right change.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Case:
    name: str
    code: str
    buggy: str
    reference: str
    compare: list[str]
    reference_for: dict[int, str] = field(default_factory=dict)
    watch_options: dict = field(default_factory=dict)


CASES = [
    # ---- AD101: a saved tensor written in place ------------------------------------------------
    Case("method_mul_", "AD101", """
        import torch
        torch.manual_seed(0)
        w = torch.randn(4, requires_grad=True)
        h = torch.sigmoid(w)
        h.mul_(2)
        h.sum().backward()
    """, """
        import torch
        torch.manual_seed(0)
        w = torch.randn(4, requires_grad=True)
        h = torch.sigmoid(w)
        h = h.mul(2)
        h.sum().backward()
    """, ["w.grad", "h"]),
    # `x[i] = f(x[i])`: the right side reads (and f saves) the tensor the statement writes into;
    # the copy must come after the value is computed.
    Case("row_rewritten_from_itself", "AD101", """
        import torch
        torch.manual_seed(0)
        layer = torch.nn.Linear(3, 3)
        x = torch.randn(4, 3, requires_grad=True)
        memory = torch.tanh(x)
        for i in range(memory.shape[0]):
            memory[i] = layer(memory[i])
        memory.sum().backward()
    """, """
        import torch
        torch.manual_seed(0)
        layer = torch.nn.Linear(3, 3)
        x = torch.randn(4, 3, requires_grad=True)
        memory = torch.stack([layer(row) for row in torch.tanh(x)])
        memory.sum().backward()
    """, ["x.grad", "layer.weight.grad", "memory"]),
    Case("augmented_assignment", "AD101", """
        import torch
        torch.manual_seed(0)
        w = torch.randn(4, requires_grad=True)
        h = w.exp()
        h += 1
        (h * w).sum().backward()
    """, """
        import torch
        torch.manual_seed(0)
        w = torch.randn(4, requires_grad=True)
        h = w.exp() + 1
        (h * w).sum().backward()
    """, ["w.grad"]),
    Case("relu_inplace_keyword", "AD101", """
        import torch
        import torch.nn.functional as F
        torch.manual_seed(0)
        w = torch.randn(5, requires_grad=True)
        s = torch.sigmoid(w)
        r = F.relu(s - 0.5, inplace=True)
        s.mul_(3)
        (r + s).sum().backward()
    """, """
        import torch
        torch.manual_seed(0)
        w = torch.randn(5, requires_grad=True)
        s = torch.sigmoid(w)
        r = torch.relu(s - 0.5)
        s = s * 3
        (r + s).sum().backward()
    """, ["w.grad"]),
    Case("module_relu_inplace", "AD101", """
        import torch
        torch.manual_seed(0)
        net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Sigmoid(), torch.nn.ReLU(inplace=True))
        x = torch.randn(2, 3)
        net(x).sum().backward()
        grads = [p.grad for p in net.parameters()]
    """, """
        import torch
        torch.manual_seed(0)
        net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Sigmoid(), torch.nn.ReLU())
        x = torch.randn(2, 3)
        net(x).sum().backward()
        grads = [p.grad for p in net.parameters()]
    """, ["grads"]),
    Case("setitem_scalar_slice", "AD101", """
        import torch
        torch.manual_seed(0)
        w = torch.randn(6, requires_grad=True)
        h = w.tanh()
        h[1:3] = 0
        h.pow(2).sum().backward()
    """, """
        import torch
        torch.manual_seed(0)
        w = torch.randn(6, requires_grad=True)
        h = w.tanh()
        keep = torch.ones(6)
        keep[1:3] = 0
        (h * keep).pow(2).sum().backward()
    """, ["w.grad"]),
    Case("setitem_tensor_row", "AD101", """
        import torch
        torch.manual_seed(0)
        w = torch.randn(3, 4, requires_grad=True)
        v = torch.randn(4, requires_grad=True)
        h = w.exp()
        h[1] = v * 2
        h.sum().backward()
    """, """
        import torch
        torch.manual_seed(0)
        w = torch.randn(3, 4, requires_grad=True)
        v = torch.randn(4, requires_grad=True)
        h = w.exp()
        h = torch.stack([h[0], v * 2, h[2]])
        h.sum().backward()
    """, ["w.grad", "v.grad"]),
    # `c[k][index] = v` where `c` is a Python tuple or list: the entry is copied, written, and put
    # back into the container (a tuple is rebuilt around the copy).
    Case("tuple_entry_column_rescaled", "AD101", """
        import torch
        torch.manual_seed(0)
        w = torch.randn(3, 4, requires_grad=True)

        def encode(x):
            return torch.tanh(x @ w), x.sum()

        state = encode(torch.randn(2, 3))
        energies = []
        for j in range(1, 3):
            energies.append((state[0] * state[0]).sum())
            state[0][:, j] = state[0][:, j] * 0.5
        sum(energies).backward()
        final = state[0]
    """, """
        import torch
        torch.manual_seed(0)
        w = torch.randn(3, 4, requires_grad=True)

        def encode(x):
            return torch.tanh(x @ w), x.sum()

        state = encode(torch.randn(2, 3))
        energies = []
        for j in range(1, 3):
            energies.append((state[0] * state[0]).sum())
            h = state[0]
            state = (torch.cat([h[:, :j], h[:, j:j + 1] * 0.5, h[:, j + 1:]], dim=1), state[1])
        sum(energies).backward()
        final = state[0]
    """, ["w.grad", "final"]),
    Case("list_entry_row_doubled", "AD101", """
        import torch
        torch.manual_seed(0)
        w1 = torch.randn(3, 3, requires_grad=True)
        w2 = torch.randn(3, 3, requires_grad=True)
        x = torch.randn(4, 3)
        layers_out = [torch.sigmoid(x @ w1), torch.sigmoid(x @ w2)]
        layers_out[1][0] = layers_out[1][0] * 2
        (layers_out[0] + layers_out[1]).sum().backward()
    """, """
        import torch
        torch.manual_seed(0)
        w1 = torch.randn(3, 3, requires_grad=True)
        w2 = torch.randn(3, 3, requires_grad=True)
        x = torch.randn(4, 3)
        layers_out = [torch.sigmoid(x @ w1), torch.sigmoid(x @ w2)]
        second = layers_out[1]
        layers_out[1] = torch.cat([second[:1] * 2, second[1:]])
        (layers_out[0] + layers_out[1]).sum().backward()
    """, ["w1.grad", "w2.grad", "layers_out"]),
    Case("setitem_bool_mask", "AD101", """
        import torch
        torch.manual_seed(0)
        w = torch.randn(6, requires_grad=True)
        h = w.sigmoid()
        h[h > 0.5] = 1.0
        (h * h).sum().backward()
    """, """
        import torch
        torch.manual_seed(0)
        w = torch.randn(6, requires_grad=True)
        h = w.sigmoid()
        h = torch.where(h > 0.5, torch.ones_like(h), h)
        (h * h).sum().backward()
    """, ["w.grad"]),
    Case("part_of_saved_tensor", "AD101", """
        import torch
        torch.manual_seed(0)
        w = torch.randn(3, 2, requires_grad=True)
        h = w.exp()
        h[0].mul_(2)
        h.sum().backward()
    """, """
        import torch
        torch.manual_seed(0)
        w = torch.randn(3, 2, requires_grad=True)
        h = w.exp()
        h = h * torch.tensor([[2.0], [1.0], [1.0]])
        h.sum().backward()
    """, ["w.grad"]),
    # ---- AD102: a leaf that requires grad written in place -----------------------------------
    Case("leaf_initialisation", "AD102", """
        import torch
        torch.manual_seed(0)
        w = torch.randn(3, requires_grad=True)
        w.mul_(0.5)
        x = torch.randn(3)
        (w * x).sum().backward()
    """, """
        import torch
        torch.manual_seed(0)
        w = torch.randn(3, requires_grad=True)
        with torch.no_grad():
            w.mul_(0.5)
        x = torch.randn(3)
        (w * x).sum().backward()
    """, ["w.grad", "w"]),
    Case("manual_sgd_loop", "AD102", """
        import torch
        torch.manual_seed(0)
        model = torch.nn.Linear(3, 2)
        x = torch.randn(4, 3)
        lr = 0.1
        model(x).pow(2).sum().backward()
        for p in model.parameters():
            p -= lr * p.grad
        weight = model.weight.detach().clone()
    """, """
        import torch
        torch.manual_seed(0)
        model = torch.nn.Linear(3, 2)
        x = torch.randn(4, 3)
        lr = 0.1
        model(x).pow(2).sum().backward()
        with torch.no_grad():
            for p in model.parameters():
                p.sub_(lr * p.grad)
        weight = model.weight.detach().clone()
    """, ["weight", "model.bias"]),
    # ---- AD104: a write into one of chunk()'s views ------------------------------------------
    Case("chunk_view_write", "AD104", """
        import torch
        torch.manual_seed(0)
        w = torch.randn(4, 3, requires_grad=True)
        a, b = (w * 2).chunk(2)
        a.mul_(3)
        (a.sum() + b.sum()).backward()
    """, """
        import torch
        torch.manual_seed(0)
        w = torch.randn(4, 3, requires_grad=True)
        a, b = (w * 2).chunk(2)
        a = a * 3
        (a.sum() + b.sum()).backward()
    """, ["w.grad"]),
    # A gate computed by in-place methods on one of split()'s views, whose result is used and the
    # view itself never read again: the chain written out of place computes the same gate.
    Case("split_view_inplace_chain", "AD104", """
        import torch
        torch.manual_seed(0)
        w = torch.randn(3, 4, requires_grad=True)
        x = torch.randn(5, 3)
        value, gate_logits = (x @ w).split(2, dim=1)
        gate = gate_logits.sigmoid_().mul_(2)
        out = value * gate
        out.pow(2).sum().backward()
    """, """
        import torch
        torch.manual_seed(0)
        w = torch.randn(3, 4, requires_grad=True)
        x = torch.randn(5, 3)
        value, gate_logits = (x @ w).split(2, dim=1)
        gate = torch.sigmoid(gate_logits) * 2
        out = value * gate
        out.pow(2).sum().backward()
    """, ["w.grad", "out"]),
    # ---- AD201: a write through .data ----------------------------------------------------------
    Case("data_write", "AD201", """
        import torch
        torch.manual_seed(0)
        w = torch.randn(4, requires_grad=True)
        h = w.sigmoid()
        h.data.mul_(2)
        h.sum().backward()
    """, """
        import torch
        torch.manual_seed(0)
        w = torch.randn(4, requires_grad=True)
        h = w.sigmoid()
        h = h.mul(2)
        h.sum().backward()
    """, ["w.grad"], watch_options={"mode": "full"}),
    # ---- AD203: operand overlaps the written tensor ------------------------------------------
    Case("overlapping_operand", "AD203", """
        import torch
        a = torch.arange(12.0).reshape(3, 4)
        a -= a[:, :1]
    """, """
        import torch
        a = torch.arange(12.0).reshape(3, 4)
        a = a - a[:, :1].clone()
    """, ["a"]),
    Case("overlapping_transpose", "AD203", """
        import torch
        a = torch.arange(9.0).reshape(3, 3)
        a.T.add_(a)
    """, """
        import torch
        a = torch.arange(9.0).reshape(3, 3)
        a = a + a.T
    """, ["a"]),
    # ---- AD204: views kept, then their base overwritten ---------------------------------------
    Case("stale_views", "AD204", """
        import torch
        buffer = torch.zeros(3)
        kept = []
        for step in range(3):
            buffer.copy_(torch.full((3,), float(step)))
            kept.append(buffer[:2])
        first = kept[0].clone()
    """, """
        import torch
        buffer = torch.zeros(3)
        kept = []
        for step in range(3):
            buffer.copy_(torch.full((3,), float(step)))
            kept.append(buffer[:2].clone())
        first = kept[0].clone()
    """, ["first"], watch_options={"capture": "mode"}),
    # ---- AD205: a write through detach() changes the source ----------------------------------
    Case("detach_alias_write", "AD205", """
        import torch
        torch.manual_seed(0)
        w = torch.randn(3, requires_grad=True)
        y = w * 2
        shown = y.detach()
        shown[0] = 0.0
        values = y.tolist()
    """, """
        import torch
        torch.manual_seed(0)
        w = torch.randn(3, requires_grad=True)
        y = w * 2
        shown = y.detach().clone()
        shown[0] = 0.0
        values = y.tolist()
    """, ["values"]),
    # ---- AD301: the gradient path was cut ------------------------------------------------------
    Case("detach_cut", "AD301", """
        import torch
        torch.manual_seed(0)
        w = torch.randn(3, requires_grad=True)
        x = torch.randn(3)
        feature = (w * x).detach()
        loss = feature.pow(2).sum()
        loss.backward()
    """, """
        import torch
        torch.manual_seed(0)
        w = torch.randn(3, requires_grad=True)
        x = torch.randn(3)
        feature = w * x
        loss = feature.pow(2).sum()
        loss.backward()
    """, ["w.grad"]),
    Case("data_cut", "AD301", """
        import torch
        torch.manual_seed(0)
        w = torch.randn(3, requires_grad=True)
        feature = w.data * 3
        loss = feature.sum()
        loss.backward()
    """, """
        import torch
        torch.manual_seed(0)
        w = torch.randn(3, requires_grad=True)
        feature = w * 3
        loss = feature.sum()
        loss.backward()
    """, ["w.grad"]),
    Case("tensor_of_list_cut", "AD301", """
        import torch
        torch.manual_seed(0)
        w = torch.randn(3, requires_grad=True)
        a = (w * 2).sum()
        b = (w * w).sum()
        losses = torch.tensor([a, b])
        losses.sum().backward()
    """, """
        import torch
        torch.manual_seed(0)
        w = torch.randn(3, requires_grad=True)
        a = (w * 2).sum()
        b = (w * w).sum()
        losses = torch.stack([a, b])
        losses.sum().backward()
    """, ["w.grad"]),
    Case("gradient_penalty_without_create_graph", "AD301", """
        import torch
        torch.manual_seed(0)
        x = torch.randn(4, 3, requires_grad=True)
        w = torch.randn(3, requires_grad=True)
        out = (x * w).tanh().sum()
        grad = torch.autograd.grad(out, x)[0]
        penalty = grad.pow(2).sum()
        penalty.backward()
    """, """
        import torch
        torch.manual_seed(0)
        x = torch.randn(4, 3, requires_grad=True)
        w = torch.randn(3, requires_grad=True)
        t = (x * w).tanh()
        grad = (1 - t * t) * w  # d out / d x, by hand
        penalty = grad.pow(2).sum()
        penalty.backward()
    """, ["w.grad", "x.grad"]),
    # ---- AD302: backward through a freed graph ------------------------------------------------
    Case("two_losses_one_graph", "AD302", """
        import torch
        torch.manual_seed(0)
        w = torch.randn(3, requires_grad=True)
        x = torch.randn(3)
        h = (w * x).tanh()
        loss1 = h.sum()
        loss2 = (h * h).sum()
        loss1.backward()
        loss2.backward()
    """, """
        import torch
        torch.manual_seed(0)
        w = torch.randn(3, requires_grad=True)
        x = torch.randn(3)
        h = (w * x).tanh()
        loss1 = h.sum()
        loss2 = (h * h).sum()
        grads = torch.autograd.grad(loss1, w, retain_graph=True)[0] + torch.autograd.grad(loss2, w)[0]
        w.grad = grads
    """, ["w.grad"]),
    # A layer applied once before the loop, trained only through its output: detaching the
    # output would leave it untrained, so the help computes it again in each iteration.
    Case("layer_applied_once_before_the_loop", "AD302", """
        import torch
        torch.manual_seed(0)
        embed = torch.nn.Linear(2, 4)
        head = torch.nn.Linear(4, 1)
        opt = torch.optim.SGD([*embed.parameters(), *head.parameters()], lr=0.1)
        x, y = torch.randn(8, 2), torch.randn(8, 1)
        features = embed(x)
        for step in range(3):
            loss = torch.nn.functional.mse_loss(head(features), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        params = [p.detach().clone() for p in [*embed.parameters(), *head.parameters()]]
    """, """
        import torch
        torch.manual_seed(0)
        embed = torch.nn.Linear(2, 4)
        head = torch.nn.Linear(4, 1)
        opt = torch.optim.SGD([*embed.parameters(), *head.parameters()], lr=0.1)
        x, y = torch.randn(8, 2), torch.randn(8, 1)
        for step in range(3):
            features = embed(x)
            loss = torch.nn.functional.mse_loss(head(features), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        params = [p.detach().clone() for p in [*embed.parameters(), *head.parameters()]]
    """, ["params"]),
    # A forward pass of several lines made before the loop (held-out set 7, nn-zero-to-hero#31):
    # computing only the last line (the loss) again would still go through the freed graph of
    # the lines before it, so the help repeats every line whose tensor has a graph (not the
    # one-hot input, which has none) at the top of the loop.
    Case("forward_lines_before_the_loop", "AD302", """
        import torch
        torch.manual_seed(0)
        W = torch.randn(5, 5, requires_grad=True)
        xs, ys = torch.randint(0, 5, (12,)), torch.randint(0, 5, (12,))
        xenc = torch.nn.functional.one_hot(xs, num_classes=5).float()
        logits = xenc @ W
        counts = logits.exp()
        probs = counts / counts.sum(1, keepdim=True)
        loss = -probs[torch.arange(12), ys].log().mean()
        for k in range(3):
            W.grad = None
            loss.backward()
            W.data += -1.0 * W.grad
    """, """
        import torch
        torch.manual_seed(0)
        W = torch.randn(5, 5, requires_grad=True)
        xs, ys = torch.randint(0, 5, (12,)), torch.randint(0, 5, (12,))
        xenc = torch.nn.functional.one_hot(xs, num_classes=5).float()
        for k in range(3):
            logits = xenc @ W
            counts = logits.exp()
            probs = counts / counts.sum(1, keepdim=True)
            loss = -probs[torch.arange(12), ys].log().mean()
            W.grad = None
            loss.backward()
            W.data += -1.0 * W.grad
    """, ["W"]),
    Case("gan_discriminator_first", "AD302", """
        import torch
        torch.manual_seed(0)
        G = torch.nn.Linear(2, 3)
        D = torch.nn.Linear(3, 1)
        opt_d = torch.optim.SGD(D.parameters(), lr=0.1)
        opt_g = torch.optim.SGD(G.parameters(), lr=0.1)
        z = torch.randn(4, 2)
        fake = G(z)
        d_loss = D(fake).mean()
        opt_d.zero_grad()
        d_loss.backward()
        opt_d.step()
        g_loss = -D(fake).mean()
        opt_g.zero_grad()
        g_loss.backward()
        opt_g.step()
        params = [p.detach().clone() for p in [*G.parameters(), *D.parameters()]]
    """, """
        import torch
        torch.manual_seed(0)
        G = torch.nn.Linear(2, 3)
        D = torch.nn.Linear(3, 1)
        opt_d = torch.optim.SGD(D.parameters(), lr=0.1)
        opt_g = torch.optim.SGD(G.parameters(), lr=0.1)
        z = torch.randn(4, 2)
        fake = G(z)
        opt_d.zero_grad()
        D(fake.detach()).mean().backward()
        opt_d.step()
        opt_g.zero_grad()
        (-D(fake).mean()).backward()
        opt_g.step()
        params = [p.detach().clone() for p in [*G.parameters(), *D.parameters()]]
    """, ["params"]),
    Case("gan_generator_first", "AD302", """
        import torch
        torch.manual_seed(0)
        G = torch.nn.Linear(2, 3)
        D = torch.nn.Linear(3, 1)
        opt_d = torch.optim.SGD(D.parameters(), lr=0.1)
        opt_g = torch.optim.SGD(G.parameters(), lr=0.1)
        z = torch.randn(4, 2)
        fake = G(z)
        g_loss = -D(fake).mean()
        opt_g.zero_grad()
        g_loss.backward()
        opt_g.step()
        d_loss = D(fake).mean()
        opt_d.zero_grad()
        d_loss.backward()
        opt_d.step()
        params = [p.detach().clone() for p in [*G.parameters(), *D.parameters()]]
    """, """
        import torch
        torch.manual_seed(0)
        G = torch.nn.Linear(2, 3)
        D = torch.nn.Linear(3, 1)
        opt_d = torch.optim.SGD(D.parameters(), lr=0.1)
        opt_g = torch.optim.SGD(G.parameters(), lr=0.1)
        z = torch.randn(4, 2)
        fake = G(z)
        opt_g.zero_grad()
        (-D(fake).mean()).backward()
        opt_g.step()
        opt_d.zero_grad()
        D(fake.detach()).mean().backward()
        opt_d.step()
        params = [p.detach().clone() for p in [*G.parameters(), *D.parameters()]]
    """, ["params"]),
    Case("loss_made_before_the_loop", "AD302", """
        import torch
        torch.manual_seed(0)
        w = torch.randn(3, requires_grad=True)
        x = torch.randn(3)
        loss = (w.sigmoid() * x).sum()
        for step in range(3):
            loss.backward()
            with torch.no_grad():
                w -= 0.1 * w.grad
                w.grad.zero_()
    """, """
        import torch
        torch.manual_seed(0)
        w = torch.randn(3, requires_grad=True)
        x = torch.randn(3)
        for step in range(3):
            loss = (w.sigmoid() * x).sum()
            loss.backward()
            with torch.no_grad():
                w -= 0.1 * w.grad
                w.grad.zero_()
    """, ["w"]),
    Case("rnn_state_across_iterations", "AD302", """
        import torch
        torch.manual_seed(0)
        cell = torch.nn.RNNCell(2, 3)
        inputs = torch.randn(3, 1, 2)
        h = torch.zeros(1, 3)
        for step in range(3):
            h = cell(inputs[step], h)
            loss = h.sum()
            loss.backward()
        grads = [p.grad.clone() for p in cell.parameters()]
    """, """
        import torch
        torch.manual_seed(0)
        cell = torch.nn.RNNCell(2, 3)
        inputs = torch.randn(3, 1, 2)
        h = torch.zeros(1, 3)
        for step in range(3):
            h = cell(inputs[step], h.detach())
            h.sum().backward()
        grads = [p.grad.clone() for p in cell.parameters()]
    """, ["grads"], reference_for={1: """
        import torch
        torch.manual_seed(0)
        cell = torch.nn.RNNCell(2, 3)
        inputs = torch.randn(3, 1, 2)
        h = torch.zeros(1, 3)
        for step in range(3):
            h = cell(inputs[step], h)
            h.sum().backward(retain_graph=True)
        grads = [p.grad.clone() for p in cell.parameters()]
    """}),
    # A module's own reset() starts its state again: called at the start of each iteration.
    Case("state_kept_on_module_with_reset", "AD302", """
        import torch
        torch.manual_seed(0)

        class Integrator(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = torch.nn.Linear(3, 3)
                self.potential = None

            def reset(self):
                self.potential = None

            def forward(self, x):
                if self.potential is None:
                    self.potential = torch.zeros_like(x)
                self.potential = 0.5 * self.potential + self.lin(x)
                return self.potential

        model = torch.nn.Sequential(Integrator(), torch.nn.Tanh())
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        losses = []
        for step in range(3):
            x = torch.randn(4, 3)
            loss = sum(model(x).pow(2).mean() for _ in range(2))
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.detach())
        params = [p.detach().clone() for p in model.parameters()]
    """, """
        import torch
        torch.manual_seed(0)

        class Integrator(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = torch.nn.Linear(3, 3)
                self.potential = None

            def reset(self):
                self.potential = None

            def forward(self, x):
                if self.potential is None:
                    self.potential = torch.zeros_like(x)
                self.potential = 0.5 * self.potential + self.lin(x)
                return self.potential

        model = torch.nn.Sequential(Integrator(), torch.nn.Tanh())
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        losses = []
        for step in range(3):
            model[0].reset()
            x = torch.randn(4, 3)
            loss = sum(model(x).pow(2).mean() for _ in range(2))
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.detach())
        params = [p.detach().clone() for p in model.parameters()]
    """, ["losses", "params"]),
    # Features handed to another model's training function with the producer's graph.
    Case("features_handed_to_another_fit", "AD302", """
        import torch
        torch.manual_seed(0)
        backbone = torch.nn.Linear(6, 3)

        def train_probe(features, labels, epochs=3):
            probe = torch.nn.Linear(3, 2)
            opt = torch.optim.SGD(probe.parameters(), lr=0.1)
            for _ in range(epochs):
                loss = torch.nn.functional.cross_entropy(probe(features), labels)
                opt.zero_grad()
                loss.backward()
                opt.step()
            return probe

        feats = torch.tanh(backbone(torch.randn(8, 6)))
        probe = train_probe(feats, torch.randint(0, 2, (8,)))
        params = [p.detach().clone() for p in probe.parameters()]
    """, """
        import torch
        torch.manual_seed(0)
        backbone = torch.nn.Linear(6, 3)

        def train_probe(features, labels, epochs=3):
            probe = torch.nn.Linear(3, 2)
            opt = torch.optim.SGD(probe.parameters(), lr=0.1)
            for _ in range(epochs):
                loss = torch.nn.functional.cross_entropy(probe(features), labels)
                opt.zero_grad()
                loss.backward()
                opt.step()
            return probe

        feats = torch.tanh(backbone(torch.randn(8, 6)))
        probe = train_probe(feats.detach(), torch.randint(0, 2, (8,)))
        params = [p.detach().clone() for p in probe.parameters()]
    """, ["params"]),
    Case("total_accumulated_from_zero", "AD302", """
        import torch
        torch.manual_seed(0)
        w = torch.randn(3, requires_grad=True)
        data = [torch.randn(3) for _ in range(3)]
        total = 0
        for x in data:
            loss = (w * x).sum()
            total += loss
            total.backward()
    """, """
        import torch
        torch.manual_seed(0)
        w = torch.randn(3, requires_grad=True)
        data = [torch.randn(3) for _ in range(3)]
        for x in data:
            (w * x).sum().backward()
    """, ["w.grad"], reference_for={1: """
        import torch
        torch.manual_seed(0)
        w = torch.randn(3, requires_grad=True)
        data = [torch.randn(3) for _ in range(3)]
        for count, x in enumerate(data):
            w.grad = (w.grad if w.grad is not None else 0) + sum(data[:count + 1])
    """}),
    Case("loss_made_before_the_loop", "AD302", """
        import torch
        torch.manual_seed(0)
        w = torch.randn(3, requires_grad=True)
        data = [torch.randn(3) for _ in range(3)]
        loss = 0
        for x in data:
            loss += (w * x).sum()
        for epoch in range(2):
            loss.backward()
    """, """
        import torch
        torch.manual_seed(0)
        w = torch.randn(3, requires_grad=True)
        data = [torch.randn(3) for _ in range(3)]
        w.grad = 2 * sum(data)
    """, ["w.grad"]),
    # ---- AD303 / AD304: copies that cut or fail ------------------------------------------------
    Case("deepcopy_of_module_holding_an_output", "AD303", """
        import copy
        import torch
        torch.manual_seed(0)
        model = torch.nn.Linear(3, 2)
        x = torch.randn(4, 3)
        model.last_output = model(x)
        snapshot = copy.deepcopy(model)
        copied = snapshot.last_output
    """, """
        import copy
        import torch
        torch.manual_seed(0)
        model = torch.nn.Linear(3, 2)
        x = torch.randn(4, 3)
        model.last_output = model(x).detach()
        snapshot = copy.deepcopy(model)
        copied = snapshot.last_output
    """, ["copied"]),
    Case("torch_tensor_of_losses", "AD304", """
        import torch
        torch.manual_seed(0)
        w = torch.randn(3, requires_grad=True)
        l1 = (w * 2).sum()
        l2 = (w * 3).sum()
        total = torch.tensor([l1, l2]).sum()
        total.backward()
    """, """
        import torch
        torch.manual_seed(0)
        w = torch.randn(3, requires_grad=True)
        (w * 2).sum().backward()
        (w * 3).sum().backward()
    """, ["w.grad"]),
    # out= into a view of a saved tensor: not a name to rebind, so the help copies first (it
    # used to offer `y.detach() = torch.add(...)`, which is not Python). Only capture="mode" sees it.
    Case("out_into_detached_view", "AD101", """
        import torch
        torch.manual_seed(0)
        x = torch.randn(3, requires_grad=True)
        y = x.sigmoid()
        torch.add(x.detach(), 1.0, out=y.detach())
        y.sum().backward()
    """, """
        import torch
        torch.manual_seed(0)
        x = torch.randn(3, requires_grad=True)
        y = x.sigmoid()
        y = y + (x.detach() + 1.0 - y).detach()
        y.sum().backward()
    """, ["x.grad", "y"], watch_options={"capture": "mode"}),
    Case("out_into_a_saved_buffer", "AD101", """
        import torch
        torch.manual_seed(0)
        x = torch.randn(3, requires_grad=True)
        scale = torch.ones(3)
        y = x * scale
        torch.mul(x.detach(), 2.0, out=scale)
        (y * scale).sum().backward()
    """, """
        import torch
        torch.manual_seed(0)
        x = torch.randn(3, requires_grad=True)
        scale = torch.ones(3)
        y = x * scale
        scale = torch.mul(x.detach(), 2.0)
        (y * scale).sum().backward()
    """, ["x.grad", "scale"], watch_options={"capture": "mode"}),
    # ---- AD103: an optimizer step() between two losses' backward() calls -------------------------
    # Two intents, both offered (unverified): step once after both backward() calls (the step then
    # applies both losses' gradients), or compute the second loss again after the step.
    Case("optimizer_step_between_backward_calls", "AD103", """
        import torch
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        x = torch.randn(4, 3)
        out = model(x)
        loss1 = out.pow(2).sum()
        loss2 = out.abs().sum()
        loss1.backward(retain_graph=True)
        opt.step()
        loss2.backward()
    """, """
        import torch
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        x = torch.randn(4, 3)
        out = model(x)
        loss1 = out.pow(2).sum()
        loss2 = out.abs().sum()
        loss1.backward(retain_graph=True)
        loss2.backward()
        opt.step()
    """, ["[*model.parameters()]", "[p.grad for p in model.parameters()]"], reference_for={1: """
        import torch
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        x = torch.randn(4, 3)
        out = model(x)
        loss1 = out.pow(2).sum()
        loss2 = out.abs().sum()
        loss1.backward(retain_graph=True)
        opt.step()
        out = model(x)
        loss2 = out.abs().sum()
        loss2.backward()
    """}, watch_options={"mode": "full"}),
]

# Diagnoses whose only right change is elsewhere or depends on intent: their helps carry no
# code, so nothing unverified is printed as a change to make.
ADVICE_ONLY = [
    # retain_graph=True would end in "modified by an inplace operation" (pow saves w)
    Case("in_place_update_between_two_backwards", "AD302", """
        import torch
        torch.manual_seed(0)
        w = torch.randn(3, requires_grad=True)
        x = torch.randn(3)
        y = w.pow(2) * x
        loss1 = y.sigmoid().sum()
        loss2 = (y ** 2).sum()
        loss1.backward()
        with torch.no_grad():
            w.mul_(0.5)
        loss2.backward()
    """, "", []),
    Case("numpy_write_into_saved_tensor", "AD202", """
        import torch
        torch.manual_seed(0)
        w = torch.randn(3, requires_grad=True)
        h = w.sigmoid()
        array = h.detach().numpy()
        array[0] = 0.0
        h.sum().backward()
    """, "", [], watch_options={"verify_saved": True}),
]

