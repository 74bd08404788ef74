"""Recall on the causes the r270-r349 re-creations left open (lint-recall-causes4).

A loss summed across a training loop with its graph (ADL023, r347): after
`loss.backward()`, `running_loss += loss` keeps every iteration's graph alive
through the sum (PyTorch's FAQ, "Don't accumulate history across your training
loop").

Each buggy case below was written before the rule was changed, in another shape
than its re-creation; it shows its bug when run (the sum carries a grad_fn),
the finding's fix applied runs and gives the values of a hand-written
reference, and similar correct patterns stay silent and run."""

from __future__ import annotations

import textwrap

import torch

from autograd_doctor.lint import lint_source
from autograd_doctor.lint.fixes import fix_source


def _load(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "case.py", "exec"), namespace)
    return namespace


def _findings(source: str) -> list[tuple[int, str]]:
    return sorted((f.line, f.code) for f in lint_source(source, "case.py"))


def _line(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def _fixed(source: str) -> str:
    text, count = fix_source(source, lambda t: lint_source(t, "case.py"), unsafe=True)
    assert count > 0
    return text


# ----- a loss summed across the loop with its graph (ADL023) -----

# A seq2seq trainer: a `while` loop over batches, the token-weighted loss summed
# by re-binding (`epoch_loss = epoch_loss + loss * n_tokens`), and a scaled loss
# backpropagated (`(loss / accumulation).backward()`).
SEQ2SEQ_EPOCH_SUM = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class TinySeq2Seq(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.GRU(3, 4, batch_first=True)
            self.decoder = nn.Linear(4, 5)

        def forward(self, source):
            states, _ = self.encoder(source)
            return self.decoder(states)

    def train_epoch(model, optimizer, batches, accumulation=1):
        epoch_loss = 0.0
        n_tokens_seen = 0
        index = 0
        while index < len(batches):
            source, target = batches[index]
            logits = model(source)
            loss = F.cross_entropy(logits.reshape(-1, 5), target.reshape(-1))
            optimizer.zero_grad()
            (loss / accumulation).backward()
            optimizer.step()
            n_tokens = target.numel()
            epoch_loss = epoch_loss + loss * n_tokens
            n_tokens_seen += n_tokens
            index += 1
        return epoch_loss / n_tokens_seen

    def main():
        torch.manual_seed(0)
        model = TinySeq2Seq()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        batches = [(torch.randn(2, 4, 3), torch.randint(0, 5, (2, 4))) for _ in range(3)]
        return train_epoch(model, optimizer, batches)
""")

# A GAN's training loop: the discriminator's loss is summed into the epoch's
# total with `+=` inside the loop over `enumerate(loader)`; the generator's is
# summed with `.item()` (correct).
GAN_DISCRIMINATOR_TOTAL = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    def train(generator, discriminator, opt_g, opt_d, loader, epochs=2):
        history = []
        for epoch in range(epochs):
            d_total, g_total = 0, 0.0
            for step, real in enumerate(loader):
                fake = generator(torch.randn(real.shape[0], 2))
                d_loss = F.softplus(discriminator(fake.detach())).mean() + \\
                    F.softplus(-discriminator(real)).mean()
                opt_d.zero_grad()
                d_loss.backward()
                opt_d.step()
                d_total += d_loss
                g_loss = F.softplus(-discriminator(fake)).mean()
                opt_g.zero_grad()
                g_loss.backward()
                opt_g.step()
                g_total += g_loss.item()
            history.append((d_total / len(loader), g_total / len(loader)))
        return history

    def main():
        torch.manual_seed(0)
        generator = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 3))
        discriminator = nn.Sequential(nn.Linear(3, 4), nn.LeakyReLU(0.2), nn.Linear(4, 1))
        opt_g = torch.optim.Adam(generator.parameters(), lr=1e-3)
        opt_d = torch.optim.Adam(discriminator.parameters(), lr=1e-3)
        loader = [torch.randn(4, 3) for _ in range(3)]
        return train(generator, discriminator, opt_g, opt_d, loader)
""")


def _as_value(total):
    return float(total.detach()) if isinstance(total, torch.Tensor) else float(total)


def test_seq2seq_epoch_sum_is_found_where_the_loss_is_summed():
    assert _findings(SEQ2SEQ_EPOCH_SUM) == [(_line(SEQ2SEQ_EPOCH_SUM, "epoch_loss = epoch_loss + loss"), "ADL023")]


def test_seq2seq_epoch_sum_keeps_the_graph_when_run():
    assert _load(SEQ2SEQ_EPOCH_SUM)["main"]().grad_fn is not None


def test_gan_discriminator_total_is_found_and_the_item_sum_is_not():
    assert _findings(GAN_DISCRIMINATOR_TOTAL) == [(_line(GAN_DISCRIMINATOR_TOTAL, "d_total += d_loss"), "ADL023")]


def test_gan_discriminator_total_keeps_the_graph_when_run():
    d_mean, _ = _load(GAN_DISCRIMINATOR_TOTAL)["main"]()[-1]
    assert d_mean.grad_fn is not None


def _reference(source: str, old: str, new: str):
    """The same program written by hand with the sum of plain numbers."""
    assert old in source
    return _load(source.replace(old, new))["main"]()


def test_seq2seq_fix_detaches_the_sum_and_keeps_its_value():
    fixed = _fixed(SEQ2SEQ_EPOCH_SUM)
    assert _findings(fixed) == []
    total = _load(fixed)["main"]()
    reference = _reference(SEQ2SEQ_EPOCH_SUM, "epoch_loss + loss * n_tokens", "epoch_loss + loss.item() * n_tokens")
    assert total.grad_fn is None
    assert _as_value(total) == _as_value(_load(SEQ2SEQ_EPOCH_SUM)["main"]())  # the same numbers
    assert abs(_as_value(total) - reference) <= 1e-6 * abs(reference)  # summed in float32


def test_gan_fix_detaches_the_sum_and_keeps_its_value():
    fixed = _fixed(GAN_DISCRIMINATOR_TOTAL)
    assert _findings(fixed) == []
    history = _load(fixed)["main"]()
    reference = _reference(GAN_DISCRIMINATOR_TOTAL, "d_total += d_loss", "d_total += d_loss.item()")
    assert all(d.grad_fn is None for d, _ in history)
    buggy = _load(GAN_DISCRIMINATOR_TOTAL)["main"]()
    assert [(_as_value(d), g) for d, g in history] == [(_as_value(d), g) for d, g in buggy]
    for (d, g), (d_ref, g_ref) in zip(history, reference):
        assert abs(_as_value(d) - d_ref) <= 1e-6 * abs(d_ref) and g == g_ref  # summed in float32


CORRECT_SUMS = {
    # a number per iteration
    "item": """
        for x, y in batches:
            loss = F.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item()
    """,
    # a detached tensor
    "detach": """
        for x, y in batches:
            loss = F.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.detach() * x.shape[0]
    """,
    # gradient accumulation: the sum itself is backpropagated
    "sum backpropagated": """
        optimizer.zero_grad()
        for x, y in batches:
            loss = F.mse_loss(model(x), y)
            loss.backward(retain_graph=True)
            total = total + loss
        total.backward()
        optimizer.step()
    """,
    # the sum starts again in every iteration: it never holds two graphs
    "reset per iteration": """
        for x, y in batches:
            total = 0.0
            loss = F.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss
    """,
    # evaluation: no backward, no graph
    "evaluation": """
        with torch.no_grad():
            for x, y in batches:
                loss = F.mse_loss(model(x), y)
                total += loss
    """,
    # summed under no_grad after the backward
    "summed under no_grad": """
        for x, y in batches:
            loss = F.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            with torch.no_grad():
                total += loss
    """,
    # the name is re-bound to a detached value before the sum
    "rebound detached": """
        for x, y in batches:
            loss = F.mse_loss(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            loss = loss.detach()
            total += loss
    """,
}


def _correct_program(body: str) -> str:
    return textwrap.dedent("""
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        def main():
            torch.manual_seed(0)
            model = nn.Linear(3, 1)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)]
            total = 0.0
        {body}
            return total
    """).format(body=textwrap.indent(textwrap.dedent(body).strip("\n"), "    "))


def test_correct_sums_are_silent_and_keep_no_graph_they_should_not():
    for name, body in CORRECT_SUMS.items():
        source = _correct_program(body)
        assert _findings(source) == [], name
        total = _load(source)["main"]()
        if name not in ("sum backpropagated", "reset per iteration"):
            assert not isinstance(total, torch.Tensor) or total.grad_fn is None, name


# ----- the result of an in-place method bound to a new name (ADL001, under r343) -----

# `weights = logits.exp_()`: an in-place method returns its receiver, so `weights`
# is `logits` itself; `exp_` keeps its result for backward, and the division
# in place through the new name overwrites it.
GATED_HEAD = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class GatedHead(nn.Module):
        def __init__(self):
            super().__init__()
            self.score = nn.Linear(4, 3)

        def forward(self, x):
            logits = self.score(x)
            weights = logits.exp_()
            weights /= weights.sum(-1, keepdim=True)
            return weights

    def main():
        torch.manual_seed(0)
        head = GatedHead()
        x = torch.randn(2, 4)
        out = head(x)
        (out * torch.arange(3.0)).sum().backward()
        return out.detach(), head.score.weight.grad
""")

# A leaf trained by hand: `gate = z.sigmoid_()` and a masked write into `gate`.
HAND_TRAINED_GATE = textwrap.dedent("""
    import torch

    def main():
        torch.manual_seed(0)
        w = torch.randn(5, requires_grad=True)
        target = torch.randn(5)
        losses = []
        for step in range(3):
            z = w * 2.0
            gate = z.sigmoid_()
            gate[gate < 0.3] = 0.0
            loss = ((gate - target) ** 2).sum()
            loss.backward()
            with torch.no_grad():
                w -= 0.1 * w.grad
                w.grad = None
            losses.append(loss.item())
        return losses, w.detach()
""")


def _raises_inplace_error(source: str) -> bool:
    try:
        _load(source)["main"]()
    except RuntimeError as error:
        return "modified by an inplace operation" in str(error)
    return False


def test_gated_head_write_through_the_in_place_result_is_found():
    assert _findings(GATED_HEAD) == [(_line(GATED_HEAD, "weights /= weights.sum"), "ADL001")]
    assert _raises_inplace_error(GATED_HEAD)


def test_hand_trained_gate_write_through_the_in_place_result_is_found():
    assert _findings(HAND_TRAINED_GATE) == [(_line(HAND_TRAINED_GATE, "gate[gate < 0.3] = 0.0"), "ADL001")]
    assert _raises_inplace_error(HAND_TRAINED_GATE)


def test_writing_out_of_place_is_silent_and_gives_the_reference():
    """The change the finding asks for (write out of place) against a hand-written
    reference that never writes in place."""
    head_fixed = GATED_HEAD.replace("weights /= weights.sum(-1, keepdim=True)",
                                    "weights = weights / weights.sum(-1, keepdim=True)")
    head_reference = GATED_HEAD.replace("weights = logits.exp_()\n", "weights = torch.exp(logits)\n").replace(
        "weights /= weights.sum(-1, keepdim=True)", "weights = torch.softmax(logits, -1)")
    assert _findings(head_fixed) == [] and _findings(head_reference) == []
    out, grad = _load(head_fixed)["main"]()
    ref_out, ref_grad = _load(head_reference)["main"]()
    assert torch.allclose(out, ref_out) and torch.allclose(grad, ref_grad)

    gate_fixed = HAND_TRAINED_GATE.replace("gate[gate < 0.3] = 0.0", "gate = gate.masked_fill(gate < 0.3, 0.0)")
    gate_reference = HAND_TRAINED_GATE.replace("gate = z.sigmoid_()", "gate = torch.sigmoid(z)").replace(
        "gate[gate < 0.3] = 0.0", "gate = torch.where(gate < 0.3, torch.zeros(()), gate)")
    assert _findings(gate_fixed) == [] and _findings(gate_reference) == []
    losses, w = _load(gate_fixed)["main"]()
    ref_losses, ref_w = _load(gate_reference)["main"]()
    assert losses == ref_losses and torch.equal(w, ref_w)


IN_PLACE_RESULTS_THAT_KEEP_NOTHING = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class Scaled(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 3)

        def forward(self, x):
            h = self.fc(x)
            shifted = h.add_(1.0)        # add keeps nothing
            shifted[:, 0] = 0.0
            scaled = shifted.mul_(2.0)   # a scalar factor keeps nothing
            scaled += 1.0
            return scaled

    def main():
        torch.manual_seed(0)
        model = Scaled()
        model(torch.randn(2, 4)).sum().backward()
        return model.fc.weight.grad
""")


def test_in_place_results_of_ops_that_keep_nothing_are_silent_and_run():
    assert _findings(IN_PLACE_RESULTS_THAT_KEEP_NOTHING) == []
    assert _load(IN_PLACE_RESULTS_THAT_KEEP_NOTHING)["main"]() is not None


# ----- a view returned by a same-file helper, read by an in-place op on its base (ADL010, r337) -----

# Top-level helpers: `outer` returns a tensor whatever its arguments are (a torch
# op's result), `swap` a transposed view of its argument; `s += swap(s)` reads
# the transpose of the tensor it writes.
SYMMETRIC_OUTER = textwrap.dedent("""
    import torch

    def outer(a, b):
        return torch.einsum("i,j->ij", a, b)

    def swap(m):
        return m.transpose(0, 1)

    def symmetric_outer(a, b):
        s = outer(a, b)
        s += swap(s)
        return s

    def main():
        torch.manual_seed(0)
        a = torch.randn(3, requires_grad=True)
        b = torch.randn(3, requires_grad=True)
        s = symmetric_outer(a, b)
        s.pow(2).sum().backward()
        return s.detach(), a.grad, b.grad
""")

# A module's method returns the leading row of its argument; the forward pass
# subtracts it in place from the tensor it is a view of.
ROW_CENTRED_MIXER = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class Mixer(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(4, 4)

        def first_row(self, t):
            return t[:1]

        def forward(self, x):
            h = self.proj(x)
            h.sub_(self.first_row(h))
            return h

    def main():
        torch.manual_seed(0)
        mixer = Mixer()
        out = mixer(torch.randn(4, 4))
        out.pow(2).sum().backward()
        return out.detach(), mixer.proj.weight.grad
""")


def _raises_overlap_error(source: str) -> bool:
    try:
        _load(source)["main"]()
    except RuntimeError as error:
        return "refer to a single memory location" in str(error)
    return False


def test_symmetric_outer_reads_a_helper_view_of_its_target():
    assert _findings(SYMMETRIC_OUTER) == [(_line(SYMMETRIC_OUTER, "s += swap(s)"), "ADL010")]
    assert _raises_overlap_error(SYMMETRIC_OUTER)


def test_row_centred_mixer_reads_a_method_view_of_its_target():
    assert _findings(ROW_CENTRED_MIXER) == [(_line(ROW_CENTRED_MIXER, "h.sub_(self.first_row(h))"), "ADL010")]
    assert _raises_overlap_error(ROW_CENTRED_MIXER)


def test_helper_view_fix_runs_and_gives_the_reference():
    for source, old, reference_line in (
            (SYMMETRIC_OUTER, "s += swap(s)", "s = s + s.t()"),
            (ROW_CENTRED_MIXER, "h.sub_(self.first_row(h))", "h = h - h[:1]")):
        fixed = _fixed(source)
        assert _findings(fixed) == []
        reference = source.replace(old, reference_line)
        for got, expected in zip(_load(fixed)["main"](), _load(reference)["main"]()):
            assert torch.equal(got, expected)


HELPER_COPIES_AND_OTHER_TENSORS = textwrap.dedent("""
    import torch

    def outer(a, b):
        return torch.einsum("i,j->ij", a, b)

    def swapped_copy(m):
        return m.transpose(0, 1).clone()

    def swap(m):
        return m.transpose(0, 1)

    def main():
        torch.manual_seed(0)
        a = torch.randn(3, requires_grad=True)
        s = outer(a, a.detach())
        s += swapped_copy(s)
        other = outer(a.detach(), a.detach())
        s += swap(other)
        s = s + swap(s)
        s.sum().backward()
        return a.grad
""")


def test_helper_copies_and_views_of_other_tensors_are_silent_and_run():
    assert _findings(HELPER_COPIES_AND_OTHER_TENSORS) == []
    assert _load(HELPER_COPIES_AND_OTHER_TENSORS)["main"]() is not None
