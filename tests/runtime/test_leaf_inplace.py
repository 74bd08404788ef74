"""AD102: in-place writes to leaves that require grad."""

import torch

from helpers import apply_help, run_plain, run_program


def test_leaf_index_write_names_creation_site(tmp_path):
    source = """
        import torch
        w = torch.zeros(3, requires_grad=True)  # CREATE
        w[0] = 1.0  # WRITE
    """
    outcome = run_program(tmp_path, source)
    assert isinstance(outcome.error, RuntimeError)
    assert "leaf Variable that requires grad" in str(outcome.error)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD102"
    assert diagnosis.primary.line == outcome.line("WRITE")
    assert {loc.role: loc.line for loc in diagnosis.related}["created"] == outcome.line("CREATE")
    assert diagnosis.help[0].replacement == "with torch.no_grad():\n    w[0] = 1.0"
    namespace = run_plain(tmp_path, apply_help(outcome))
    assert torch.equal(namespace["w"].detach(), torch.tensor([1.0, 0.0, 0.0]))
    assert namespace["w"].is_leaf and namespace["w"].requires_grad


def test_manual_sgd_update_on_parameter(tmp_path):
    source = """
        import torch
        from torch import nn
        torch.manual_seed(0)
        model = nn.Linear(3, 1)
        loss = model(torch.randn(4, 3)).pow(2).mean()
        loss.backward()
        for p in model.parameters():
            p -= 0.1 * p.grad  # WRITE
    """
    outcome = run_program(tmp_path, source)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD102"
    assert diagnosis.primary.line == outcome.line("WRITE")
    assert diagnosis.tensor.parameter == "model.weight"
    assert diagnosis.help[0].replacement == "with torch.no_grad():\n    p -= 0.1 * p.grad"
    namespace = run_plain(tmp_path, apply_help(outcome))
    assert namespace["model"].weight.is_leaf


def test_leaf_write_out_of_place_help(tmp_path):
    source = """
        import torch
        w = torch.ones(3, requires_grad=True)  # CREATE
        w.mul_(2)  # WRITE
        w.sum().backward()
    """
    outcome = run_program(tmp_path, source)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD102"
    # No `w = w.mul(2)`: rebinding the leaf's name leaves w.grad None. The help says to
    # give the result a new name, which is what this test then does by hand.
    assert not [h for h in diagnosis.help if h.replacement and h.replacement.startswith("w = ")]
    assert any("new name" in h.message and h.replacement is None for h in diagnosis.help)
    fixed = outcome.source.replace("w.mul_(2)  # WRITE", "w2 = w.mul(2)").replace("w.sum()", "w2.sum()")
    namespace = run_plain(tmp_path, fixed)
    assert torch.equal(namespace["w"].grad, torch.full((3,), 2.0))


def test_inplace_module_on_a_leaf_names_its_definition_in_both_modes(tmp_path):
    # The write is made by torch.nn.functional (`torch._C._nn.leaky_relu_`) for a module defined
    # with inplace=True: the line to change is the definition, and no_grad around the call would
    # overwrite the leaf and drop the activation's gradient. In the full mode, while nothing was
    # saved yet, such a write skipped the recording and PyTorch's refusal went unexplained.
    source = """
        import torch
        from torch import nn
        torch.manual_seed(0)
        activation = nn.LeakyReLU(0.2, inplace=True)  # DEFINE
        points = torch.randn(5, 3, requires_grad=True)  # CREATE
        out = activation(points)  # WRITE
        (out * 3.0).sum().backward()
        grads = [points.grad]
    """
    for mode in ("light", "full"):
        outcome = run_program(tmp_path, source, mode=mode)
        assert "leaf Variable that requires grad" in str(outcome.error)
        diagnosis = outcome.diagnosis
        assert diagnosis.code == "AD102", mode
        assert diagnosis.primary.line == outcome.line("DEFINE")
        related = {loc.role: loc.line for loc in diagnosis.related}
        assert related["created"] == outcome.line("CREATE") and related["called"] == outcome.line("WRITE")
        assert diagnosis.tensor.name == "points"
        assert diagnosis.help[0].message == "define the LeakyReLU with inplace=False"
        assert diagnosis.help[0].replacement == "activation = nn.LeakyReLU(0.2, inplace=False)"
        assert not any(h.replacement and "no_grad" in h.replacement for h in diagnosis.help)
    # The help applied gives the program a hand-written reference computes.
    fixed = apply_help(outcome)
    reference = outcome.source.replace("out = activation(points)  # WRITE",
                                       "out = torch.where(points > 0, points, 0.2 * points)")
    got, want = run_plain(tmp_path, fixed), run_plain(tmp_path, reference, "reference.py")
    assert torch.equal(got["grads"][0], want["grads"][0])
    assert torch.equal(got["out"], want["out"])


def test_functional_inplace_activation_on_a_leaf_in_the_full_mode(tmp_path):
    source = """
        import torch
        import torch.nn.functional as F
        scores = torch.randn(2, 4, requires_grad=True)  # CREATE
        kept = F.hardtanh(scores, -0.5, 0.5, inplace=True)  # WRITE
        kept.sum().backward()
    """
    outcome = run_program(tmp_path, source, mode="full")
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD102"
    assert diagnosis.primary.line == outcome.line("WRITE")
    assert diagnosis.help[0].replacement == "kept = F.hardtanh(scores, -0.5, 0.5, inplace=False)"
    namespace = run_plain(tmp_path, apply_help(outcome))
    assert torch.equal(namespace["scores"].grad, ((namespace["scores"] > -0.5) & (namespace["scores"] < 0.5)).float())


def test_a_value_with_grad_history_written_into_a_leaf_gets_no_no_grad_help(tmp_path):
    # The write carries gradient to `mixer`: torch.no_grad() around it would run, and silently
    # leave mixer's gradient None. The help says to compute out of place under a new name.
    source = """
        import torch
        from torch import nn
        torch.manual_seed(0)
        mixer = nn.Linear(2, 3)
        queries = nn.Parameter(torch.randn(4, 3))
        queries[1:] += mixer(torch.randn(3, 2))  # WRITE
        loss = queries.tanh().sum()
        loss.backward()
        grads = [mixer.weight.grad, mixer.bias.grad, queries.grad]
    """
    outcome = run_program(tmp_path, source)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD102" and diagnosis.primary.line == outcome.line("WRITE")
    assert not any(h.replacement for h in diagnosis.help)
    assert diagnosis.help[0].message.startswith("compute it out of place under a new name")
    # What the help says, done by hand, trains both; the no_grad version would leave mixer untrained.
    followed = run_plain(tmp_path, outcome.source.replace(
        "queries[1:] += mixer(torch.randn(3, 2))  # WRITE",
        "mixed = torch.cat([queries[:1], queries[1:] + mixer(torch.randn(3, 2))])").replace(
        "loss = queries.tanh()", "loss = mixed.tanh()"))
    assert all(g is not None for g in followed["grads"])
    under_no_grad = run_plain(tmp_path, outcome.source.replace(
        "queries[1:] += mixer", "with torch.no_grad():\n    queries[1:] += mixer"), "no_grad.py")
    assert under_no_grad["grads"][0] is None


def test_weights_copied_into_a_parameter_without_an_optimizer_offer_both_changes_and_say_why(tmp_path):
    # Fusing a scale into copied weights: the value has grad history and nothing in the run says
    # whether that history is trained. The report says so and offers both changes, each with its
    # condition; a module's parameter cannot be rebound to a copy, so the copy is advice and the
    # only change written out is no_grad.
    source = """
        import torch
        from torch import nn
        torch.manual_seed(0)
        source_layer = nn.Linear(3, 2)
        target_layer = nn.Linear(3, 2)
        fused = source_layer.weight * 0.5
        target_layer.weight[:, :] = fused  # WRITE
        loss = target_layer(torch.randn(4, 3)).pow(2).sum()
        loss.backward()
    """
    outcome = run_program(tmp_path, source)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD102" and diagnosis.primary.line == outcome.line("WRITE")
    assert any(note.startswith("the run cannot tell what this write is for") and "source_layer.weight" in note
               for note in diagnosis.notes)
    assert diagnosis.help[0].replacement is None and diagnosis.help[0].message.startswith(
        "compute it out of place under a new name") and "(if the write is part of the computation)" in \
        diagnosis.help[0].message
    assert diagnosis.help[1].message.startswith("if the write copies values in")
    assert diagnosis.help[1].replacement == "with torch.no_grad():\n    target_layer.weight[:, :] = fused"
    namespace = run_plain(tmp_path, apply_help(outcome, 1))
    assert torch.equal(namespace["target_layer"].weight, namespace["source_layer"].weight * 0.5)
    assert namespace["source_layer"].weight.grad is None and namespace["target_layer"].weight.grad is not None


def test_a_network_output_written_into_a_trained_leaf_is_written_into_a_copy(tmp_path):
    # The value written comes from `painter`, which the optimizer trains: no_grad around the write
    # would run and silently stop painter training. The change is a copy that is not a leaf, and
    # the program then computes what a hand-written out-of-place version computes.
    source = """
        import torch
        from torch import nn
        torch.manual_seed(0)

        def paste(board, rows, patch):
            board[rows:rows + patch.shape[0]] = patch  # WRITE
            return board

        board = nn.Parameter(torch.zeros(5, 3))
        painter = nn.Linear(2, 3)
        optimizer = torch.optim.SGD([board, *painter.parameters()], lr=0.1)
        pasted = paste(board, 1, painter(torch.randn(2, 2)))
        loss = (pasted - 1.0).pow(2).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        result = [loss.detach(), board.detach().clone(), *[p.detach().clone() for p in painter.parameters()]]
    """
    outcome = run_program(tmp_path, source)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD102" and diagnosis.primary.line == outcome.line("WRITE")
    assert any("carries gradient to painter.weight, painter.bias, which optimizer.step() updates" in note
               for note in diagnosis.notes)
    assert diagnosis.help[0].replacement == "board = board.clone()\nboard[rows:rows + patch.shape[0]] = patch"
    assert not any(h.replacement and "no_grad" in h.replacement for h in diagnosis.help)
    fixed = run_plain(tmp_path, apply_help(outcome))
    reference = run_plain(tmp_path, outcome.source.replace(
        "board[rows:rows + patch.shape[0]] = patch  # WRITE",
        "board = torch.cat([board[:rows], patch, board[rows + patch.shape[0]:]])"), "reference.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["result"], reference["result"]))
    # painter trained: it got a gradient, which no_grad around the write would have left None.
    assert fixed["painter"].weight.grad is not None and fixed["painter"].weight.grad.abs().sum() > 0


def test_values_copied_in_while_the_optimizer_trains_other_tensors_keep_no_grad_first(tmp_path):
    # An optimizer exists, and what the value comes from is not in it: nothing trained flows
    # through the write, which copies values in.
    source = """
        import torch
        from torch import nn
        torch.manual_seed(0)
        teacher = nn.Linear(3, 2)
        student = nn.Linear(3, 2)
        optimizer = torch.optim.SGD(student.parameters(), lr=0.1)
        student.weight[:, :] = teacher.weight * 0.5  # WRITE
        loss = student(torch.randn(4, 3)).pow(2).sum()
        loss.backward()
        optimizer.step()
    """
    outcome = run_program(tmp_path, source)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD102" and diagnosis.primary.line == outcome.line("WRITE")
    assert any("no optimizer in the program updates what it comes from: the write copies values in" in note
               for note in diagnosis.notes)
    assert diagnosis.help[0].replacement == "with torch.no_grad():\n    student.weight[:, :] = teacher.weight * 0.5"
    namespace = run_plain(tmp_path, apply_help(outcome))
    assert namespace["teacher"].weight.grad is None and namespace["student"].weight.grad is not None


def test_an_optimizer_held_by_a_trainer_object_counts_as_evidence(tmp_path):
    source = """
        import torch
        from torch import nn
        torch.manual_seed(0)

        class Trainer:
            def __init__(self):
                self.memory = nn.Parameter(torch.zeros(4, 2))
                self.writer = nn.Linear(2, 2)
                self.opt = torch.optim.SGD([self.memory, *self.writer.parameters()], lr=0.1)

            def step(self, x):
                memory = self.memory
                memory[:2] = self.writer(x)  # WRITE
                return memory.sum()

        Trainer().step(torch.randn(2, 2)).backward()
    """
    outcome = run_program(tmp_path, source)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD102"
    assert any("which self.opt.step() updates" in note for note in diagnosis.notes)
    assert diagnosis.help[0].replacement == "memory = memory.clone()\nmemory[:2] = self.writer(x)"
