"""Causes found by held-out variants set 28 (docs/errors.md, "Held-out variants", set 28), each tested on
another program of the same cause (not the variant) and on a correct near-twin; the variants themselves
are run by tests/errors/test_held_out_variants.py.

AD234: `return (loss, aux),` under has_aux=True: a trailing comma wraps the pair in a tuple of one
element. The element is the pair the transform wants: the help returns it.

AD237: torch.autograd.functional's `jacobian(..., strategy="forward-mode")` and `hessian(...,
outer_jacobian_strategy="forward-mode")` through a Function without jvp: the call without that keyword
(reverse mode, the default) computes the same values from the Function's backward.

AD150: a `continue` between `scaler.step()` and `scaler.update()` of one loop body skips the update on the
passes that take it: the help calls update() before that continue.

AD303: a forward hook that stores its module's output on the module (`module.last = output`): the
assignment is found in the hook's file, and the help stores the value without its history.

AD151: `nn.Embedding.from_pretrained(table)` / `nn.EmbeddingBag.from_pretrained(table)` take the table
itself, in its dtype, as the trained weight: a float16 table is named there and given as a float32 copy.

AD301: `torch.autograd.grad(...)` without create_graph=True inside a function of the user's that the
failing loss's statement calls (a gradient-matching helper): the nested-cut search now takes it as the cut
when it is the function's one such call and its gradients flow to the return; create_graph=True is added
there."""

from __future__ import annotations

import torch

from helpers import apply_help, run_as_script, run_plain

# ---- AD234 ---------------------------------------------------------------------------------------

# The one-element tuple written with explicit parentheses, a dict aux, grad_and_value, a plain function.
ONE_TUPLE_OF_THE_PAIR = """
    import torch
    from torch.func import grad_and_value

    def loss_fn(w, x):
        loss = (x @ w).pow(2).mean()
        return ((loss, {"norm": w.norm()}),)  # RETURN

    torch.manual_seed(0)
    w, x = torch.randn(3), torch.randn(5, 3)
    grads, (value, aux) = grad_and_value(loss_fn, has_aux=True)(w, x)
"""

ONE_TUPLE_CORRECT = ONE_TUPLE_OF_THE_PAIR.replace('return ((loss, {"norm": w.norm()}),)  # RETURN',
                                                  'return loss, {"norm": w.norm()}')

# A one-element tuple of three values: which of them is the output is not the tuple's to say.
ONE_TUPLE_OF_THREE = ONE_TUPLE_OF_THE_PAIR.replace('((loss, {"norm": w.norm()}),)',
                                                   '((loss, x.shape[0], w.norm()),)')


def test_a_pair_wrapped_in_a_one_element_tuple_is_returned_itself(tmp_path):
    outcome = run_as_script(tmp_path, ONE_TUPLE_OF_THE_PAIR)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD234", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("RETURN")
    assert diagnosis.help[0].replacement == 'return loss, {"norm": w.norm()}'
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    correct = run_plain(tmp_path, ONE_TUPLE_CORRECT, "correct.py")
    assert torch.equal(fixed["grads"], correct["grads"]) and torch.equal(fixed["value"], correct["value"])
    assert torch.equal(fixed["aux"]["norm"], correct["aux"]["norm"])


def test_the_pair_returned_itself_stays_silent(tmp_path):
    outcome = run_as_script(tmp_path, ONE_TUPLE_CORRECT)
    assert outcome.error is None and not outcome.diagnoses


def test_a_one_element_tuple_of_three_values_gets_no_unwrapping(tmp_path):
    outcome = run_as_script(tmp_path, ONE_TUPLE_OF_THREE)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD234", [d.code for d in outcome.diagnoses]
    assert all("trailing comma" not in suggestion.message for suggestion in diagnosis.help)


# ---- AD237 ---------------------------------------------------------------------------------------

# The Jacobian spelling, in a class method, the Function batched by generate_vmap_rule.
JACOBIAN_FORWARD_MODE = """
    import torch

    class Squash(torch.autograd.Function):  # FUNCTION
        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            return x / (1 + x.abs())

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, grad_out):
            (x,) = ctx.saved_tensors
            return grad_out / (1 + x.abs()).pow(2)

    class Probe:
        def __init__(self, weight):
            self.weight = weight

        def field(self, x):
            return Squash.apply(self.weight @ x)

        def sensitivity(self, x):
            return torch.autograd.functional.jacobian(self.field, x, vectorize=True, strategy="forward-mode")  # CALL

    torch.manual_seed(0)
    probe = Probe(torch.randn(4, 3))
    sensitivity = probe.sensitivity(torch.randn(3))
"""

JACOBIAN_WITH_JVP = JACOBIAN_FORWARD_MODE.replace("""            ctx.save_for_backward(inputs[0])
""", """            ctx.save_for_backward(inputs[0])
            ctx.save_for_forward(inputs[0])

        @staticmethod
        def jvp(ctx, tangent):
            (x,) = ctx.saved_tensors
            return tangent / (1 + x.abs()).pow(2)
""")

# The Hessian spelling through a backward marked @once_differentiable: reverse over reverse would fail.
HESSIAN_ONCE_DIFFERENTIABLE = """
    import torch
    from torch.autograd.function import once_differentiable

    class Soft(torch.autograd.Function):  # FUNCTION
        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            return torch.nn.functional.softplus(x)

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        @once_differentiable
        def backward(ctx, grad_out):
            (x,) = ctx.saved_tensors
            return grad_out * torch.sigmoid(x)

    def energy(x):
        return Soft.apply(x).sum()

    h = torch.autograd.functional.hessian(energy, torch.randn(3), vectorize=True,
                                          outer_jacobian_strategy="forward-mode")
"""


def test_a_forward_mode_strategy_keyword_is_dropped(tmp_path):
    outcome = run_as_script(tmp_path, JACOBIAN_FORWARD_MODE)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD237", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("FUNCTION")
    assert diagnosis.help[0].location.line == outcome.line("CALL")
    assert "strategy" not in diagnosis.help[0].replacement
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    correct = run_plain(tmp_path, JACOBIAN_WITH_JVP, "correct.py")
    assert torch.allclose(fixed["sensitivity"], correct["sensitivity"], atol=1e-6)


def test_the_function_with_its_jvp_stays_silent(tmp_path):
    outcome = run_as_script(tmp_path, JACOBIAN_WITH_JVP)
    assert outcome.error is None and not outcome.diagnoses


def test_a_once_differentiable_backward_keeps_the_forward_mode_hessian(tmp_path):
    outcome = run_as_script(tmp_path, HESSIAN_ONCE_DIFFERENTIABLE)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD237", [d.code for d in outcome.diagnoses]
    assert all(not suggestion.replacement for suggestion in diagnosis.help), diagnosis.help


# ---- AD150 ---------------------------------------------------------------------------------------

# A while loop that skips the logging of its first passes with a continue after the step.
WHILE_LOOP_CONTINUE = """
    import torch
    from torch import nn

    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 6)
    history, step = [], 0
    while step < 4:
        optimizer.zero_grad()
        loss = (model(torch.randn(6, 3)) - 1.0).pow(2).mean()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        step += 1
        if step < 3:
            continue  # SKIP
        history.append(loss.item())
        scaler.update()
    weights = [p.detach().clone() for p in model.parameters()]
"""

WHILE_LOOP_CORRECT = WHILE_LOOP_CONTINUE.replace("            continue  # SKIP",
                                                 "            scaler.update()\n            continue")

# A continue of a nested loop (over the parameter groups) between the step and the update: it does not
# skip the update, and the program runs.
NESTED_LOOP_CONTINUE = """
    import torch
    from torch import nn

    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 6)
    for step in range(3):
        optimizer.zero_grad()
        scaler.scale(model(torch.randn(6, 3)).pow(2).mean()).backward()
        scaler.step(optimizer)
        for group in optimizer.param_groups:
            if step == 0:
                continue
            group["lr"] *= 0.9
        scaler.update()
"""


def test_a_continue_that_skips_the_update_gets_it_first(tmp_path):
    outcome = run_as_script(tmp_path, WHILE_LOOP_CONTINUE)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD150", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("SKIP")
    assert diagnosis.help[0].replacement == "scaler.update()\ncontinue"
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    correct = run_plain(tmp_path, WHILE_LOOP_CORRECT, "correct.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["weights"], correct["weights"]))
    assert fixed["history"] == correct["history"]


def test_the_update_before_the_continue_stays_silent(tmp_path):
    outcome = run_as_script(tmp_path, WHILE_LOOP_CORRECT)
    assert outcome.error is None and not outcome.diagnoses


def test_a_nested_loops_continue_stays_silent(tmp_path):
    outcome = run_as_script(tmp_path, NESTED_LOOP_CONTINUE)
    assert outcome.error is None and not outcome.diagnoses


# ---- AD303 ---------------------------------------------------------------------------------------

# A forward pre-hook registered through functools.partial keeps the input a layer was given; an EMA copy
# of the model is made by deepcopy in a function after a step.
PRE_HOOK_KEEPS_INPUT = """
    import copy
    import functools

    import torch
    from torch import nn

    def keep_input(name, module, args):
        module.seen_input = args[0]  # STORED

    def make_ema(model):
        return copy.deepcopy(model)

    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    model[2].register_forward_pre_hook(functools.partial(keep_input, "head"))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss = model(torch.randn(5, 3)).pow(2).mean()
    loss.backward()
    optimizer.step()
    ema = make_ema(model)
    weights = [p.detach().clone() for p in ema.parameters()]
"""

PRE_HOOK_CORRECT = PRE_HOOK_KEEPS_INPUT.replace("module.seen_input = args[0]  # STORED",
                                                "module.seen_input = args[0].detach()")


def test_a_hook_that_stores_on_its_module_is_named_and_detached(tmp_path):
    outcome = run_as_script(tmp_path, PRE_HOOK_KEEPS_INPUT)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD303", [d.code for d in outcome.diagnoses]
    assert any(location.line == outcome.line("STORED") for location in diagnosis.related)
    assert diagnosis.help[0].replacement == "module.seen_input = args[0].detach()"
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    correct = run_plain(tmp_path, PRE_HOOK_CORRECT, "correct.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["weights"], correct["weights"]))


def test_the_hook_that_stores_a_detached_value_stays_silent(tmp_path):
    outcome = run_as_script(tmp_path, PRE_HOOK_CORRECT)
    assert outcome.error is None and not outcome.diagnoses


# ---- AD151 ---------------------------------------------------------------------------------------

# An EmbeddingBag made from a table cast with .to(torch.float16) in the same file, inside a class.
EMBEDDING_BAG_FROM_HALF_TABLE = """
    import torch
    from torch import nn

    class Tagger(nn.Module):
        def __init__(self, table):
            super().__init__()
            self.bag = nn.EmbeddingBag.from_pretrained(table, freeze=False, mode="sum")  # MADE
            self.out = nn.Linear(table.shape[1], 2)

        def forward(self, tokens):
            return self.out(self.bag(tokens).float())

    torch.manual_seed(0)
    table = torch.randn(12, 3).to(torch.float16)
    model = Tagger(table)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0 ** 6)
    for _ in range(2):
        tokens, labels = torch.randint(0, 12, (4, 3)), torch.randint(0, 2, (4,))
        optimizer.zero_grad()
        scaler.scale(nn.functional.cross_entropy(model(tokens), labels)).backward()
        scaler.unscale_(optimizer)
        scaler.step(optimizer)
        scaler.update()
    weights = [p.detach().clone() for p in model.parameters()]
"""

EMBEDDING_BAG_CORRECT = EMBEDDING_BAG_FROM_HALF_TABLE.replace("from_pretrained(table, freeze=False",
                                                              "from_pretrained(table.float(), freeze=False")


def test_a_half_table_given_to_from_pretrained_is_given_as_float32(tmp_path):
    outcome = run_as_script(tmp_path, EMBEDDING_BAG_FROM_HALF_TABLE)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD151", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("MADE")
    assert "from_pretrained(table.float(), freeze=False" in diagnosis.help[0].replacement
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    correct = run_plain(tmp_path, EMBEDDING_BAG_CORRECT, "correct.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["weights"], correct["weights"]))


def test_the_float32_table_stays_silent(tmp_path):
    outcome = run_as_script(tmp_path, EMBEDDING_BAG_CORRECT)
    assert outcome.error is None and not outcome.diagnoses


# ---- AD301 ---------------------------------------------------------------------------------------

# A gradient penalty computed by a method of a Trainer-like class, backpropagated on its own.
PENALTY_METHOD_WITHOUT_GRAPH = """
    import torch
    from torch import nn

    class PenaltyTrainer:
        def __init__(self, critic):
            self.critic = critic
            self.optimizer = torch.optim.SGD(critic.parameters(), lr=0.05)

        def penalty(self, critic, points):
            points = points.clone().requires_grad_()
            scores = critic(points)
            (slopes,) = torch.autograd.grad(scores.sum(), points)  # CUT
            return (slopes.norm(dim=1) - 1.0).pow(2).mean()

        def step(self, points):
            self.optimizer.zero_grad()
            penalty = self.penalty(self.critic, points)
            penalty.backward()
            self.optimizer.step()

    torch.manual_seed(0)
    critic = nn.Sequential(nn.Linear(2, 5), nn.Tanh(), nn.Linear(5, 1))
    trainer = PenaltyTrainer(critic)
    for _ in range(2):
        trainer.step(torch.randn(6, 2))
    weights = [p.detach().clone() for p in critic.parameters()]
"""

PENALTY_METHOD_CORRECT = PENALTY_METHOD_WITHOUT_GRAPH.replace(
    "torch.autograd.grad(scores.sum(), points)  # CUT", "torch.autograd.grad(scores.sum(), points, create_graph=True)")

# Two gradients taken without a graph in the helper: which one should keep its graph is not known.
TWO_GRADIENTS_WITHOUT_GRAPH = """
    import torch
    from torch import nn

    def match(network, real, synthetic):
        params = list(network.parameters())
        target = torch.autograd.grad(network(real).pow(2).mean(), params)
        mine = torch.autograd.grad(network(synthetic).pow(2).mean(), params)
        return sum((a - b).pow(2).sum() for a, b in zip(mine, target))

    torch.manual_seed(0)
    network = nn.Linear(3, 1)
    synthetic = torch.randn(2, 3, requires_grad=True)
    match(network, torch.randn(8, 3), synthetic).backward()
"""


def test_a_gradient_without_graph_in_a_method_given_self_attributes_keeps_the_advice(tmp_path):
    # Written before the change ran on it, and not covered: the caller passes `self.critic`, and the search
    # starts from the caller's names whose live values carry gradients (`self`, a Trainer, is not one).
    outcome = run_as_script(tmp_path, PENALTY_METHOD_WITHOUT_GRAPH)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD301", [d.code for d in outcome.diagnoses]
    assert all(not suggestion.replacement for suggestion in diagnosis.help), diagnosis.help


# The same penalty in a plain function given the critic by name (the variant's shape is a helper module's
# function given the network).
PENALTY_FUNCTION_WITHOUT_GRAPH = """
    import torch
    from torch import nn

    def slope_penalty(critic, points):
        points = points.clone().requires_grad_()
        (slopes,) = torch.autograd.grad(critic(points).sum(), points)  # CUT
        return (slopes.norm(dim=1) - 1.0).pow(2).mean()

    torch.manual_seed(0)
    critic = nn.Sequential(nn.Linear(2, 5), nn.Tanh(), nn.Linear(5, 1))
    optimizer = torch.optim.SGD(critic.parameters(), lr=0.05)
    for _ in range(2):
        optimizer.zero_grad()
        penalty = slope_penalty(critic, torch.randn(6, 2))
        penalty.backward()
        optimizer.step()
    weights = [p.detach().clone() for p in critic.parameters()]
"""

PENALTY_FUNCTION_CORRECT = PENALTY_FUNCTION_WITHOUT_GRAPH.replace(
    "torch.autograd.grad(critic(points).sum(), points)  # CUT",
    "torch.autograd.grad(critic(points).sum(), points, create_graph=True)")


def test_a_gradient_without_graph_in_a_called_function_gets_create_graph(tmp_path):
    outcome = run_as_script(tmp_path, PENALTY_FUNCTION_WITHOUT_GRAPH)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD301", [d.code for d in outcome.diagnoses]
    assert diagnosis.primary.line == outcome.line("CUT")
    assert diagnosis.help[0].replacement.endswith(
        "torch.autograd.grad(critic(points).sum(), points, create_graph=True)")
    fixed = run_plain(tmp_path, apply_help(outcome), "fixed.py")
    correct = run_plain(tmp_path, PENALTY_FUNCTION_CORRECT, "correct.py")
    assert all(torch.equal(a, b) for a, b in zip(fixed["weights"], correct["weights"]))


def test_the_penalty_with_its_graph_stays_silent(tmp_path):
    for source in (PENALTY_FUNCTION_CORRECT, PENALTY_METHOD_CORRECT):
        outcome = run_as_script(tmp_path, source)
        assert outcome.error is None and not outcome.diagnoses


def test_two_gradients_without_graph_get_no_create_graph(tmp_path):
    outcome = run_as_script(tmp_path, TWO_GRADIENTS_WITHOUT_GRAPH)
    diagnosis = outcome.diagnosis
    assert diagnosis.code == "AD301", [d.code for d in outcome.diagnoses]
    assert all("create_graph=True" not in (suggestion.replacement or "") for suggestion in diagnosis.help)
