"""AD182: a function that combines a list of modules starts from the list's item itself
(`merged = models[0]`) and writes the combination into it. Set 15's PySyft `federated_avg` did so:
the "average" was client 0, so loading the server's state into each client loaded client 0 into
itself, and client 0's training moved the server model (PySyft PR 3614 combined into a deep copy).

The two programs below were written for this cause before the check was run on them: a weight
soup of seeds that sums through the soup's state dict (`from copy import deepcopy`), and a local
SGD whose leader replica is averaged with `.data` writes. A best member picked from a population
(an item returned unchanged, on purpose) stays silent."""

from __future__ import annotations

import torch

from helpers import apply_help, run_plain, run_program

SEED_SOUP_SUMMED_INTO_FIRST_MEMBER = """
    from copy import deepcopy

    import torch
    from torch import nn
    import torch.nn.functional as F

    torch.manual_seed(0)
    members = [nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 1)) for _ in range(3)]
    shards = [(torch.randn(12, 4), torch.randn(12, 1)) for _ in range(3)]


    def make_soup(models):
        soup = models[0]  # ALIAS
        totals = soup.state_dict()
        for other in models[1:]:
            for key, value in other.state_dict().items():
                totals[key] += value
        for key in totals:
            totals[key] /= len(models)
        return soup


    soup = deepcopy(members[0])
    history = []
    for round_index in range(3):
        for member, (x, y) in zip(members, shards):
            member.load_state_dict(soup.state_dict())  # LOAD
            optimizer = torch.optim.SGD(member.parameters(), lr=0.05)
            for _ in range(2):
                optimizer.zero_grad()
                F.mse_loss(member(x), y).backward()
                optimizer.step()
        soup = make_soup(members)
        history.append([p.detach().clone() for p in soup.parameters()])
    result = [tensor for round_params in history for tensor in round_params]
"""

SOUP_INTENDED = SEED_SOUP_SUMMED_INTO_FIRST_MEMBER.replace("soup = models[0]  # ALIAS", "soup = deepcopy(models[0])")

LOCAL_SGD_AVERAGED_INTO_LEADER = """
    import copy

    import torch
    from torch import nn

    torch.manual_seed(3)
    replicas = [nn.Linear(3, 2) for _ in range(4)]
    batches = [(torch.randn(8, 3), torch.randn(8, 2)) for _ in range(4)]


    def synchronise(workers):
        leader = workers[0]  # ALIAS
        with torch.no_grad():
            for follower in workers[1:]:
                for mine, theirs in zip(leader.parameters(), follower.parameters()):
                    mine.data += theirs.data
            for mine in leader.parameters():
                mine.data /= len(workers)
        return leader


    shared = copy.deepcopy(replicas[0])
    snapshots = []
    for period in range(3):
        for replica, (inputs, targets) in zip(replicas, batches):
            replica.load_state_dict(shared.state_dict())  # LOAD
            optimizer = torch.optim.SGD(replica.parameters(), lr=0.1)
            optimizer.zero_grad()
            (replica(inputs) - targets).pow(2).mean().backward()
            optimizer.step()
        shared = synchronise(replicas)
        snapshots.extend(p.detach().clone() for p in shared.parameters())
    result = snapshots
"""

LOCAL_SGD_INTENDED = LOCAL_SGD_AVERAGED_INTO_LEADER.replace("leader = workers[0]  # ALIAS",
                                                            "leader = copy.deepcopy(workers[0])")


def _combined(outcome):
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == "AD182"]
    return diagnosis


def test_the_soups_first_member_is_named_with_the_load(tmp_path):
    outcome = run_program(tmp_path, SEED_SOUP_SUMMED_INTO_FIRST_MEMBER)
    diagnosis = _combined(outcome)
    assert diagnosis.primary.line == outcome.line("ALIAS")
    assert outcome.line("LOAD") in [r.line for r in diagnosis.related]
    assert "soup is members[0]" in " ".join(r.note for r in diagnosis.related)
    assert diagnosis.help[0].replacement == "soup = deepcopy(models[0])"


def test_the_soup_made_in_a_copy_equals_the_hand_written_version(tmp_path):
    outcome = run_program(tmp_path, SEED_SOUP_SUMMED_INTO_FIRST_MEMBER)
    outcome.diagnoses = [_combined(outcome)]
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    intended = run_plain(tmp_path, SOUP_INTENDED, "intended.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["result"], intended["result"]))
    buggy = run_plain(tmp_path, SEED_SOUP_SUMMED_INTO_FIRST_MEMBER, "buggy.py")
    assert not all(torch.equal(a, b) for a, b in zip(buggy["result"], intended["result"]))


def test_the_local_sgd_leader_is_named_and_copied(tmp_path):
    outcome = run_program(tmp_path, LOCAL_SGD_AVERAGED_INTO_LEADER)
    diagnosis = _combined(outcome)
    assert diagnosis.primary.line == outcome.line("ALIAS")
    assert diagnosis.help[0].replacement == "leader = copy.deepcopy(workers[0])"
    outcome.diagnoses = [diagnosis]
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    intended = run_plain(tmp_path, LOCAL_SGD_INTENDED, "intended.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["result"], intended["result"]))


def test_the_intended_versions_are_silent(tmp_path):
    for source in (SOUP_INTENDED, LOCAL_SGD_INTENDED):
        outcome = run_program(tmp_path, source)
        assert not [d for d in outcome.diagnoses if d.code in ("AD182", "AD169")]


def test_a_best_member_copied_into_the_population_is_silent(tmp_path):
    # Population-based training: the best member is an item of the list on purpose, returned as it
    # is (nothing written into it); loading it into itself along with the others changes nothing.
    source = """
        import torch
        from torch import nn

        torch.manual_seed(0)
        population = [nn.Linear(2, 1) for _ in range(3)]
        x, y = torch.randn(6, 2), torch.randn(6, 1)


        def pick_best(members):
            best = members[0]
            for member in members[1:]:
                if (member(x) - y).pow(2).mean() < (best(x) - y).pow(2).mean():
                    best = member
            return best


        for generation in range(2):
            best = pick_best(population)
            for member in population:
                member.load_state_dict(best.state_dict())
                optimizer = torch.optim.SGD(member.parameters(), lr=0.1 * (1 + population.index(member)))
                optimizer.zero_grad()
                (member(x) - y).pow(2).mean().backward()
                optimizer.step()
    """
    outcome = run_program(tmp_path, source)
    assert not [d for d in outcome.diagnoses if d.code == "AD182"]
