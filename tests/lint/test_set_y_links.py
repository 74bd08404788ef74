"""Set Y (docs/lint.md, twenty-seventh check).  The set's first run, with the
rules frozen at 6070909, had 10 false alarms, all of one cause, which these
tests keep fixed next to the real form, each claim run with torch:

* ADL021 on a module's (or optimizer's) own state loaded back in tests
  (https://github.com/pytorch/torchrec, `torchrec/distributed/tests/test_cache_prefetch.py`
  and `torchrec/modules/tests/test_fused_embedding_modules.py`;
  https://github.com/Xilinx/brevitas, `tests/brevitas/nn/test_recurrent.py`; false):
  `m.load_state_dict(m.state_dict())` is a round trip that tests loading
  itself (its load hooks, torchrec's cache purge; the warnings it gives).  The
  rule took every self-load for a target network refreshed from itself.  It is
  now reported only where the same function (a plain name) or class (an
  attribute of `self`) shows the receiver is a copy of another module: loaded
  elsewhere from another module's `state_dict()`, or built by `copy.deepcopy`.
* Kept: a target network built by `deepcopy` (or loaded from the online
  network) and later "refreshed" from itself: reported, the target keeps its
  first weights, and the help applied makes it follow the online network."""

from __future__ import annotations

import textwrap

import torch

from autograd_doctor.lint import lint_source


def _findings(source: str):
    return [(f.line, f.code) for f in lint_source(source, "set_y.py") if f.code != "ADL000"]


def _namespace(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "set_y.py", "exec"), namespace)
    return namespace


def _line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


# brevitas's form: a test that loading a model's own state gives no warning.
ROUND_TRIP_TEST = textwrap.dedent("""
    import warnings
    import torch
    import torch.nn as nn

    def test_state_dict_loads_without_warning():
        qm = nn.LSTM(3, 4)
        with warnings.catch_warnings(record=True) as wlist:
            qm.load_state_dict(qm.state_dict())
            for w in wlist:
                assert "deprecated" not in str(w.message)
        return qm
""")


def test_a_round_trip_in_a_test_is_silent_and_keeps_the_module():
    assert _findings(ROUND_TRIP_TEST) == []
    torch.manual_seed(0)
    qm = _namespace(ROUND_TRIP_TEST)["test_state_dict_loads_without_warning"]()
    assert isinstance(qm, torch.nn.LSTM)


# torchrec's form: a self-load run for its load hook (here a cache the hook clears).
LOAD_HOOK = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class CachedTable(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.randn(5, 2))
            self.cache = {}
            self.register_load_state_dict_pre_hook(self._purge)

        def _purge(self, *args, **kwargs):
            self.cache.clear()

        def forward(self, i):
            if i not in self.cache:
                self.cache[i] = self.weight[i]
            return self.cache[i]

    def purge_by_reloading():
        table = CachedTable()
        table(1)
        table(2)
        table.load_state_dict(table.state_dict())
        return table
""")


def test_a_self_load_run_for_its_hook_is_silent_and_does_something():
    assert _findings(LOAD_HOOK) == []
    table = _namespace(LOAD_HOOK)["purge_by_reloading"]()
    assert table.cache == {}  # the line is not a no-op: the hook purged the cache


# A name loaded from another module in one test is not the same object as the
# name in the next test (brevitas's `qm` in two functions).
TWO_TESTS = textwrap.dedent("""
    import torch
    import torch.nn as nn

    def test_copy():
        m, qm = nn.Linear(2, 2), nn.Linear(2, 2)
        qm.load_state_dict(m.state_dict())
        return torch.equal(qm.weight, m.weight)

    def test_round_trip():
        qm = nn.Linear(2, 2)
        qm.load_state_dict(qm.state_dict())
        return qm
""")


def test_a_copy_in_another_function_is_no_evidence():
    assert _findings(TWO_TESTS) == []
    namespace = _namespace(TWO_TESTS)
    assert namespace["test_copy"]()
    namespace["test_round_trip"]()


OPTIMIZER_ROUND_TRIP = textwrap.dedent("""
    import torch

    def round_trip():
        w = torch.nn.Parameter(torch.ones(3))
        opt = torch.optim.Adam([w], lr=0.1)
        w.sum().backward()
        opt.step()
        opt.load_state_dict(opt.state_dict())
        return opt
""")


def test_an_optimizer_round_trip_is_silent():
    assert _findings(OPTIMIZER_ROUND_TRIP) == []
    opt = _namespace(OPTIMIZER_ROUND_TRIP)["round_trip"]()
    assert len(opt.state_dict()["state"]) == 1


# The real form: a target network made by deepcopy, "refreshed" from itself.
DEEPCOPY_TARGET = textwrap.dedent("""
    import copy
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Agent:
        def __init__(self):
            torch.manual_seed(0)
            self.online = nn.Linear(3, 2)
            self.target = copy.deepcopy(self.online)
            self.optimizer = torch.optim.SGD(self.online.parameters(), lr=0.5)

        def learn(self, s, r, s2, step):
            with torch.no_grad():
                y = r + 0.9 * self.target(s2).max(1)[0]
            loss = F.mse_loss(self.online(s).max(1)[0], y)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            if step % 2 == 1:
                self.target.load_state_dict(self.target.state_dict())

    def main():
        agent = Agent()
        start = [p.detach().clone() for p in agent.target.parameters()]
        torch.manual_seed(1)
        for step in range(2):
            agent.learn(torch.randn(4, 3), torch.ones(4), torch.randn(4, 3), step)
        return agent, start
""")


def test_a_deepcopied_target_loading_its_own_state_is_found_and_changes_nothing():
    source = DEEPCOPY_TARGET
    assert _findings(source) == [(_line_of(source, "self.target.load_state_dict(self.target"), "ADL021")]
    agent, start = _namespace(source)["main"]()
    assert all(torch.equal(p, s) for p, s in zip(agent.target.parameters(), start))  # never refreshed


def test_the_help_applied_makes_the_target_follow_the_online_network():
    fixed = DEEPCOPY_TARGET.replace("self.target.load_state_dict(self.target.state_dict())",
                                    "self.target.load_state_dict(self.online.state_dict())")
    assert _findings(fixed) == []
    agent, start = _namespace(fixed)["main"]()
    assert all(torch.equal(p, o) for p, o in zip(agent.target.parameters(), agent.online.parameters()))
    assert not all(torch.equal(p, s) for p, s in zip(agent.target.parameters(), start))


# The real form with plain names in one function: the copy is loaded from the
# online network first, then "refreshed" from itself in the loop.
LOCAL_TARGET = textwrap.dedent("""
    import torch
    import torch.nn as nn

    def train(steps=4):
        torch.manual_seed(0)
        online, target = nn.Linear(3, 1), nn.Linear(3, 1)
        target.load_state_dict(online.state_dict())
        opt = torch.optim.SGD(online.parameters(), lr=0.1)
        for step in range(steps):
            x = torch.randn(8, 3)
            with torch.no_grad():
                y = target(x) + 1.0
            loss = (online(x) - y).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            target.load_state_dict(target.state_dict())
        return online, target
""")


def test_a_local_target_loading_its_own_state_is_found():
    source = LOCAL_TARGET
    assert _findings(source) == [(_line_of(source, "target.load_state_dict(target.state_dict())"), "ADL021")]
    online, target = _namespace(source)["train"]()
    assert not torch.equal(online.weight, target.weight)  # the target stayed at the first weights
    fixed = source.replace("target.load_state_dict(target.state_dict())",
                           "target.load_state_dict(online.state_dict())")
    assert _findings(fixed) == []
    online, target = _namespace(fixed)["train"]()
    assert torch.equal(online.weight, target.weight)


# Copies made in one tuple assignment, at module level (a QMIX script's
# `target_rnn, target_mixer = copy.deepcopy(rnn), copy.deepcopy(mixer)`).
TUPLE_DEEPCOPY = textwrap.dedent("""
    import copy
    import torch
    import torch.nn as nn

    torch.manual_seed(0)
    online, mixer = nn.Linear(3, 1), nn.Linear(1, 1)
    target, target_mixer = copy.deepcopy(online), copy.deepcopy(mixer)
    opt = torch.optim.SGD(list(online.parameters()) + list(mixer.parameters()), lr=0.1)
    start = target_mixer.weight.detach().clone()
    for step in range(3):
        x = torch.randn(8, 3)
        with torch.no_grad():
            y = target_mixer(target(x)) + 1.0
        loss = (mixer(online(x)) - y).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        target.load_state_dict(online.state_dict())
        target_mixer.load_state_dict(target_mixer.state_dict())
""")


def test_a_tuple_of_deepcopies_is_evidence_of_a_copy():
    source = TUPLE_DEEPCOPY
    assert _findings(source) == [(_line_of(source, "target_mixer.load_state_dict(target_mixer"), "ADL021")]
    namespace = _namespace(source)
    assert torch.equal(namespace["target_mixer"].weight, namespace["start"])  # never refreshed
    fixed = source.replace("target_mixer.load_state_dict(target_mixer.state_dict())",
                           "target_mixer.load_state_dict(mixer.state_dict())")
    assert _findings(fixed) == []
    namespace = _namespace(fixed)
    assert torch.equal(namespace["target_mixer"].weight, namespace["mixer"].weight)
