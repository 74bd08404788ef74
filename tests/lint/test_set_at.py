"""Set AT (docs/lint.md, "A forty-eighth held-out check: set AT"): the false cause of
its first run fixed here, with the false shape (silent), a second false shape written
before the change ran on it, a real shape of the same rule still found, and torch
checks.  None of the shapes is a copy of the set's code:

- ADL003 in taolei87/sru (https://github.com/taolei87/sru,
  `language_model/train_enwik8.py`): the language model's `init_hidden` takes
  `weight = next(self.parameters()).data` and returns `weight.new(self.depth,
  batch_size, self.n_d).zero_()`, zeros of the parameters' dtype and device; the
  training loop makes `hidden` with it before the loop and steps the optimizer in each
  iteration.  The legacy constructor `Tensor.new` was read as a new-tensor method of a
  parameter (its dtype and device), but the module's attributes given to it
  (`self.depth`) were not read as sizes, so the method counted as computing from the
  parameters and `hidden` as a value of them made before the step.
"""

from __future__ import annotations

import textwrap

import torch

from autograd_doctor.lint.engine import Selection, lint_source


def _found(source, select=("ALL",)):
    return [(f.code, f.line) for f in lint_source(source, filename="<string>", selection=Selection(select=select))
            if f.code != "ADL000"]


def _load(source, name="set_at"):
    namespace = {"__name__": name}
    exec(compile(source, f"<{name}>", "exec"), namespace)
    return namespace


def _line(source, text):
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


# --- ADL003: an RNN's initial state made with the legacy `new(sizes...)` -------------

# The set's form, in other words: a word-level language model whose `init_hidden` makes
# zeros with `weight.new(n_layers, batch, n_hidden)` of a parameter's `.data`, and a
# truncated-backpropagation loop that detaches the carried state in place before each
# chunk.
LANGUAGE_MODEL = textwrap.dedent("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class WordModel(nn.Module):
        def __init__(self, n_words, n_hidden, n_layers):
            super().__init__()
            self.n_hidden = n_hidden
            self.n_layers = n_layers
            self.embed = nn.Embedding(n_words, n_hidden)
            self.rnn = nn.GRU(n_hidden, n_hidden, n_layers)
            self.decode = nn.Linear(n_hidden, n_words)

        def forward(self, tokens, hidden):
            output, hidden = self.rnn(self.embed(tokens), hidden)
            return self.decode(output), hidden

        def init_hidden(self, batch):
            weight = next(self.parameters()).data
            return weight.new(self.n_layers, batch, self.n_hidden).zero_()

    def train(corpus, n_words=7, chunk=3):
        torch.manual_seed(0)
        model = WordModel(n_words, 5, 2)
        optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
        hidden = model.init_hidden(corpus.shape[1])
        for start in range(0, corpus.shape[0] - 1, chunk):
            tokens = corpus[start:start + chunk]
            targets = corpus[start + 1:start + 1 + chunk]
            hidden.detach_()
            logits, hidden = model(tokens[:len(targets)], hidden)
            loss = F.cross_entropy(logits.reshape(-1, n_words), targets.reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        return model
""")

# A second false form, written before the change ran on it: a recurrent policy held by
# an agent, whose initial state is `p.new(1, n, self.size).fill_(0.0)` of the first
# parameter itself (no `.data`), an LSTM pair, made before a loop of update steps.
RECURRENT_AGENT = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class RecurrentPolicy(nn.Module):
        def __init__(self, n_obs, size, n_actions):
            super().__init__()
            self.size = size
            self.core = nn.LSTM(n_obs, size)
            self.head = nn.Linear(size, n_actions)

        def forward(self, obs, state):
            features, state = self.core(obs, state)
            return self.head(features).log_softmax(-1), state

        def initial_state(self, n):
            p = next(self.parameters())
            return p.new(1, n, self.size).fill_(0.0), p.new(1, n, self.size).fill_(0.0)

    class Agent:
        def __init__(self):
            torch.manual_seed(0)
            self.policy = RecurrentPolicy(4, 6, 3)
            self.optimizer = torch.optim.SGD(self.policy.parameters(), lr=0.1)

        def update(self, observations, actions, advantages):
            h, c = self.policy.initial_state(observations.shape[1])
            for t in range(observations.shape[0]):
                h.detach_()
                c.detach_()
                log_probs, (h, c) = self.policy(observations[t:t + 1], (h, c))
                chosen = log_probs[0].gather(1, actions[t].unsqueeze(1)).squeeze(1)
                loss = -(chosen * advantages[t]).mean()
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            return self.policy
""")

# The real form of the rule: the same model, but its initial state is a learned one
# computed from two parameters (`h0 * gate` keeps both for backward), made once before
# the loop and handed to every iteration's forward without being made again, each
# backward retaining the graph: the second chunk's backward reaches `h0 * gate` after
# the step changed both.
LEARNED_START = LANGUAGE_MODEL.replace(
    "self.decode = nn.Linear(n_hidden, n_words)",
    "self.decode = nn.Linear(n_hidden, n_words)\n"
    "        self.h0 = nn.Parameter(torch.full((n_layers, 1, n_hidden), 0.1))\n"
    "        self.gate = nn.Parameter(torch.full((n_layers, 1, n_hidden), 0.5))",
).replace(
    "return weight.new(self.n_layers, batch, self.n_hidden).zero_()",
    "return weight.new(self.n_layers, batch, self.n_hidden).zero_() + self.h0 * self.gate",
).replace(
    "        hidden.detach_()\n"
    "        logits, hidden = model(tokens[:len(targets)], hidden)",
    "        logits, _ = model(tokens[:len(targets)], hidden)",
).replace("loss.backward()", "loss.backward(retain_graph=True)")


def _corpus():
    return torch.randint(0, 7, (10, 2), generator=torch.Generator().manual_seed(1))


def test_zeros_made_by_legacy_new_with_sizes_are_no_value_of_the_parameters():
    assert _found(LANGUAGE_MODEL) == []


def test_the_set_form_trains_as_with_torch_zeros():
    model = _load(LANGUAGE_MODEL)["train"](_corpus())
    reference_source = LANGUAGE_MODEL.replace(
        "return weight.new(self.n_layers, batch, self.n_hidden).zero_()",
        "return torch.zeros(self.n_layers, batch, self.n_hidden)")
    assert reference_source != LANGUAGE_MODEL
    reference = _load(reference_source, "set_at_reference")["train"](_corpus())
    assert all(torch.equal(a, b) for a, b in zip(model.parameters(), reference.parameters()))


def test_a_held_policy_state_made_by_new_with_sizes_is_silent_and_runs():
    assert _found(RECURRENT_AGENT) == []
    agent = _load(RECURRENT_AGENT)["Agent"]()
    observations = torch.randn(4, 2, 4, generator=torch.Generator().manual_seed(2))
    actions = torch.randint(0, 3, (4, 2), generator=torch.Generator().manual_seed(3))
    policy = agent.update(observations, actions, torch.ones(4, 2))
    assert all(torch.isfinite(p).all() for p in policy.parameters())


def test_one_argument_new_keeps_the_link():
    # `p.new(self.h0)` is an alias of the parameter with its graph: no size.
    source = LEARNED_START.replace(
        "return weight.new(self.n_layers, batch, self.n_hidden).zero_() + self.h0 * self.gate",
        "return weight.new(self.h0 * self.gate)")
    assert source != LEARNED_START
    assert ("ADL003", _line(source, "optimizer.step()")) in _found(source)
    alias = torch.nn.Parameter(torch.ones(2)).new(torch.nn.Parameter(torch.ones(2)))
    assert alias.requires_grad and alias.grad_fn is not None


def test_a_learned_start_computed_before_the_loop_is_still_found_and_fails():
    assert LEARNED_START != LANGUAGE_MODEL
    assert ("ADL003", _line(LEARNED_START, "optimizer.step()")) in _found(LEARNED_START)
    try:
        _load(LEARNED_START)["train"](_corpus())
    except RuntimeError as error:
        assert "modified by an inplace operation" in str(error)
    else:
        raise AssertionError("the second chunk's backward should reach the start the step changed")


# --- ADL003: a state cut in place by `detach_()` before each backward ------------------
#
# The set's loop has a second link missing: it calls `hidden.detach_()` at the top of
# each iteration, before the forward that reads it, so even an initial state computed
# from the parameters is cut from its graph before any backward after the step.  The
# in-place cut was read for a state the loop carries (`_carried`), not for the value
# bound before the loop.

# The set's loop, its initial state now a learned one (no longer made with `new`).
LEARNED_CUT = LEARNED_START.replace(
    "        logits, _ = model(tokens[:len(targets)], hidden)",
    "        hidden.detach_()\n"
    "        logits, hidden = model(tokens[:len(targets)], hidden)",
)

# A second form, written before the change ran on it: a held recurrent policy whose
# initial state a layer computes from a learned seed; a `while` loop over the
# observations cuts it in place first, then steps.
SEEDED_AGENT = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class SeededPolicy(nn.Module):
        def __init__(self, n_obs, size, n_actions):
            super().__init__()
            self.seed = nn.Parameter(torch.ones(1, 1, 2))
            self.start = nn.Linear(2, size)
            self.core = nn.GRU(n_obs, size)
            self.head = nn.Linear(size, n_actions)

        def forward(self, obs, state):
            features, state = self.core(obs, state)
            return self.head(features).log_softmax(-1), state

        def initial_state(self, n):
            return torch.tanh(self.start(self.seed)).expand(1, n, -1).contiguous()

    class Agent:
        def __init__(self):
            torch.manual_seed(0)
            self.policy = SeededPolicy(4, 6, 3)
            self.optimizer = torch.optim.SGD(self.policy.parameters(), lr=0.1)

        def update(self, observations, actions, advantages):
            state = self.policy.initial_state(observations.shape[1])
            t = 0
            while t < observations.shape[0]:
                state.detach_()
                log_probs, state = self.policy(observations[t:t + 1], state)
                chosen = log_probs[0].gather(1, actions[t].unsqueeze(1)).squeeze(1)
                loss = -(chosen * advantages[t]).mean()
                self.optimizer.zero_grad()
                loss.backward(retain_graph=True)
                self.optimizer.step()
                t += 1
            return self.policy
""")


def test_a_learned_start_cut_in_place_before_each_chunk_is_silent_and_runs():
    assert _found(LEARNED_CUT) == []
    model = _load(LEARNED_CUT)["train"](_corpus())
    reference_source = LEARNED_CUT.replace("        hidden.detach_()\n", "        hidden = hidden.detach()\n")
    assert reference_source != LEARNED_CUT
    reference = _load(reference_source, "set_at_reference")["train"](_corpus())
    assert all(torch.equal(a, b) for a, b in zip(model.parameters(), reference.parameters()))


def test_a_held_policy_state_cut_in_place_in_a_while_loop_is_silent_and_runs():
    assert _found(SEEDED_AGENT) == []
    agent = _load(SEEDED_AGENT)["Agent"]()
    observations = torch.randn(4, 2, 4, generator=torch.Generator().manual_seed(2))
    actions = torch.randint(0, 3, (4, 2), generator=torch.Generator().manual_seed(3))
    policy = agent.update(observations, actions, torch.ones(4, 2))
    assert all(torch.isfinite(p).all() for p in policy.parameters())


def test_a_cut_only_on_one_branch_keeps_the_link():
    # the cut must run whenever the step runs: on one branch of an `if`, the other
    # path reaches the step-changed start (a config that cuts, another that does not)
    source = LEARNED_CUT.replace(
        "        hidden.detach_()\n",
        "        if start > 100:\n"
        "            hidden.detach_()\n")
    assert source != LEARNED_CUT
    assert ("ADL003", _line(source, "optimizer.step()")) in _found(source)
    try:
        _load(source)["train"](_corpus())
    except RuntimeError as error:
        assert "modified by an inplace operation" in str(error)
    else:
        raise AssertionError("without the cut, the second chunk's backward reaches the changed start")
