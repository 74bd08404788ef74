"""Set T (docs/lint.md, twenty-second check).  The set's first run, with the
rules frozen at cee5568, gave no finding (ADL000 aside), so no rule changed;
these tests keep forms read in the set's training loops, each claim run with
torch:

* MiniMind's PPO update (https://github.com/jingyaogong/minimind,
  `trainer/train_ppo.py`): once the approximate KL passes the limit, the
  loss is multiplied by `0.0` and still backpropagated (so every rank runs
  the same backward).  Silent; the zero loss gives zero gradients, so the
  plain SGD step leaves the parameters where the hand-written update put them.
* The RLHF book's chunked distillation loss (https://github.com/natolambert/rlhf-book,
  `code/distillation/loss.py`): one backward per chunk, guarded by
  `loss.requires_grad`, skipped when the loss is not finite, and the total
  kept as `float(loss.detach())`.  Silent; the gradients add up to the
  gradient of the sum of the chunks' losses.
* A loss summed for the log over a gradient-accumulation window (the RLHF
  book's `code/reward_models/train_orm.py` and `code/policy_gradients/train.py`
  sum `loss.item()`; here the sum keeps the tensor): reset to `0.0` at every
  optimizer step, the sum holds at most one window's graphs, so ADL023 stays
  silent; never reset, it holds every batch's graph and ADL023 reports it.
* ALASKA2's in-place writes (https://github.com/BloodAxe/Kaggle-2020-Alaska2):
  `F.cosine_similarity(...).pow_(2)` and the adversarial input clamped and
  normalised in place (`in1.clamp_(0, 1.0)`, `in1.sub_(mean).div_(std)`),
  each on an output no backward keeps.  Silent; values and gradients equal
  the out-of-place versions."""

from __future__ import annotations

import textwrap

import pytest
import torch
import torch.nn.functional as F

from autograd_doctor.lint import lint_source


def _codes(source: str) -> list[tuple[int, str]]:
    return [(f.line, f.code) for f in lint_source(source, "set_t.py")]


def _namespace(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "set_t.py", "exec"), namespace)
    return namespace


def _line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def _autograd_nodes(tensor) -> int:
    seen, stack = set(), [tensor.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        stack.extend(next_node for next_node, _ in node.next_functions)
    return len(seen)


# ----- MiniMind: the PPO loss scaled to zero after the KL limit -------------

EARLY_STOP = textwrap.dedent("""
    import torch


    def ppo_update(policy, optimizer, minibatches, early_stop_kl):
        stop = False
        for obs, old_logp, adv in minibatches:
            logp = policy(obs).log_softmax(-1)[:, 0]
            log_ratio = logp - old_logp
            approx_kl = (0.5 * log_ratio ** 2).mean()
            if approx_kl.detach() > early_stop_kl:
                stop = True
            policy_loss = -(torch.exp(log_ratio) * adv).mean()
            if stop:
                loss = policy_loss * 0.0
            else:
                loss = policy_loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        return stop
    """)


def _minibatches():
    generator = torch.Generator().manual_seed(2)
    return [(torch.randn(5, 3, generator=generator), torch.full((5,), -0.7), torch.randn(5, generator=generator))
            for _ in range(3)]


def test_ppo_loss_scaled_to_zero_after_the_kl_limit_is_silent_and_steps_by_hand():
    assert _codes(EARLY_STOP) == []
    torch.manual_seed(0)
    policy = torch.nn.Linear(3, 2)
    reference = [p.detach().clone() for p in policy.parameters()]
    optimizer = torch.optim.SGD(policy.parameters(), lr=0.1)
    minibatches = _minibatches()
    # a limit the first minibatch already passes: every loss is scaled to zero
    assert _namespace(EARLY_STOP)["ppo_update"](policy, optimizer, minibatches, early_stop_kl=-1.0)
    for p, p_ref in zip(policy.parameters(), reference):
        assert torch.equal(p.detach(), p_ref)
    # a limit never passed: the hand-written update, minibatch by minibatch
    weight, bias = (p.detach().clone().requires_grad_() for p in reference)
    for obs, old_logp, adv in minibatches:
        logp = (obs @ weight.T + bias).log_softmax(-1)[:, 0]
        loss = -(torch.exp(logp - old_logp) * adv).mean()
        grad_w, grad_b = torch.autograd.grad(loss, (weight, bias))
        with torch.no_grad():
            weight -= 0.1 * grad_w
            bias -= 0.1 * grad_b
    assert not _namespace(EARLY_STOP)["ppo_update"](policy, optimizer, minibatches, early_stop_kl=1e9)
    assert torch.allclose(policy.weight, weight, atol=1e-6)
    assert torch.allclose(policy.bias, bias, atol=1e-6)


# ----- the RLHF book: one guarded backward per chunk, the total a float -----

CHUNKED = textwrap.dedent("""
    import torch


    def chunked_backward(model, chunks, scale):
        total = 0.0
        for x in chunks:
            loss = model(x).pow(2).mean() * scale
            if not loss.isfinite():
                continue
            if loss.requires_grad:
                loss.backward()
            total += float(loss.detach())
        return total
    """)


def test_chunked_backward_with_a_float_total_is_silent_and_sums_the_gradients():
    assert _codes(CHUNKED) == []
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2)
    chunks = [torch.randn(3, 4), torch.full((3, 4), float("inf")), torch.randn(2, 4)]
    total = _namespace(CHUNKED)["chunked_backward"](model, chunks, scale=0.5)
    finite = [chunks[0], chunks[2]]
    expected_loss = sum(model(x).pow(2).mean() * 0.5 for x in finite)
    expected_grads = torch.autograd.grad(expected_loss, list(model.parameters()))
    assert abs(total - expected_loss.item()) < 1e-6
    for p, g in zip(model.parameters(), expected_grads):
        assert torch.allclose(p.grad, g, atol=1e-6)


# ----- a window's loss summed for the log: reset each step, or never --------

WINDOW_SUM = textwrap.dedent("""
    import torch


    def train(model, optimizer, batches, batch_acc):
        optimizer.zero_grad(set_to_none=True)
        accumulated_loss = 0.0
        logged = []
        for idx, (x, y) in enumerate(batches):
            loss = ((model(x) - y) ** 2).mean()
            (loss / batch_acc).backward()
            accumulated_loss += loss
            if (idx + 1) % batch_acc == 0:
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
                logged.append(float(accumulated_loss / batch_acc))
                accumulated_loss = 0.0
        return logged
    """)

NEVER_RESET = WINDOW_SUM.replace("            accumulated_loss = 0.0\n", "")


def _returning_the_sum(source: str) -> str:
    # the same loop, its sum handed back so the test can count what it holds
    # (linted as written above: a returned sum may be backpropagated by the caller)
    return source.replace("    return logged\n", "    return logged, accumulated_loss\n")


def _regression_batches(count):
    generator = torch.Generator().manual_seed(3)
    return [(torch.randn(4, 3, generator=generator), torch.randn(4, 1, generator=generator)) for _ in range(count)]


def _run(source, batches):
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    logged, last_sum = _namespace(_returning_the_sum(source))["train"](model, optimizer, batches, batch_acc=2)
    return logged, last_sum


@pytest.mark.filterwarnings("ignore:Converting a tensor with requires_grad")  # the log line formats the sum
def test_window_sum_reset_at_each_step_is_silent_and_holds_one_window():
    assert NEVER_RESET != WINDOW_SUM and _returning_the_sum(WINDOW_SUM) != WINDOW_SUM
    assert _codes(WINDOW_SUM) == []
    # 9 batches, windows of 2: the sum left at the end holds the last (odd) batch only
    _, last_sum = _run(WINDOW_SUM, _regression_batches(9))
    _, last_sum_of_one = _run(WINDOW_SUM, _regression_batches(1))
    assert _autograd_nodes(last_sum) == _autograd_nodes(last_sum_of_one) > 0


@pytest.mark.filterwarnings("ignore:Converting a tensor with requires_grad")  # the log line formats the sum
def test_window_sum_never_reset_is_reported_and_holds_every_batch():
    assert _codes(NEVER_RESET) == [(_line_of(NEVER_RESET, "accumulated_loss += loss"), "ADL023")]
    _, total = _run(NEVER_RESET, _regression_batches(9))
    _, total_of_one = _run(NEVER_RESET, _regression_batches(1))
    assert _autograd_nodes(total) > 5 * _autograd_nodes(total_of_one) > 0


# ----- ALASKA2: in-place writes on outputs nothing saves --------------------

IN_PLACE_ON_UNSAVED_OUTPUTS = textwrap.dedent("""
    import torch
    import torch.nn.functional as F


    def embedding_loss(embeddings, num_images):
        loss = 0
        for i in range(num_images):
            cover = embeddings[i * 2 + 0]
            stego = embeddings[i * 2 + 1]
            loss += F.cosine_similarity(cover, stego, dim=0).pow_(2)
        return loss / num_images


    def noisy_input(batch, noise, mean, std):
        noise_batch = noise.clone().requires_grad_()
        in1 = batch + noise_batch
        in1.clamp_(0, 1.0)
        in1.sub_(mean).div_(std)
        return in1, noise_batch
    """)


def test_in_place_writes_on_outputs_nothing_saves_are_silent_and_match_out_of_place():
    # https://github.com/BloodAxe/Kaggle-2020-Alaska2, alaska2/loss.py (the
    # squared cosine similarity, written with pow_) and alaska2/adv_free.py
    # (the free adversarial noise clamped and normalised in place)
    assert _codes(IN_PLACE_ON_UNSAVED_OUTPUTS) == []
    namespace = _namespace(IN_PLACE_ON_UNSAVED_OUTPUTS)
    torch.manual_seed(0)
    embeddings = torch.randn(6, 5, requires_grad=True)
    namespace["embedding_loss"](embeddings, 3).backward()
    reference = embeddings.detach().clone().requires_grad_()
    expected = sum(F.cosine_similarity(reference[2 * i], reference[2 * i + 1], dim=0) ** 2 for i in range(3)) / 3
    expected.backward()
    assert torch.allclose(embeddings.grad, reference.grad, atol=1e-6)

    batch, noise = torch.rand(2, 3), torch.randn(2, 3) * 0.5
    written, noise_leaf = namespace["noisy_input"](batch, noise, 0.5, 0.25)
    written.sum().backward()
    noise_reference = noise.clone().requires_grad_()
    expected_input = ((batch + noise_reference).clamp(0, 1.0) - 0.5) / 0.25
    expected_input.sum().backward()
    assert torch.equal(written.detach(), expected_input.detach())
    assert torch.equal(noise_leaf.grad, noise_reference.grad)
