"""Helps made code where held-out set 15 got advice and the change is mechanical (docs/bug-reports.md,
"Helps made right, 8 December"), each on programs of its own, in other shapes than the variants
(tests/errors/variants, `# set: 15`): the diagnosis names the line to change, its help applied makes
the program compute what a hand-written version computes, and a correct near-twin runs silent.

- AD132: a weight tied to another module's (`head.weight = embed.weight`) in two parameter groups;
- AD149: a helper that unscales every optimizer of the list, called inside the loop that steps them;
- AD143: a learned tensor kept in a plain dict attribute of a traced module.
"""

from __future__ import annotations

import os
import sys
import textwrap

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "errors"))

from catalogue import apply_suggestion, marked_line, run_plain, run_watched, write  # noqa: E402

import autograd_doctor  # noqa: E402


def diagnose(tmp_path, source, name="program"):
    source = textwrap.dedent(source)
    error = run_watched(write(tmp_path, source, name))
    assert error is not None
    return source, autograd_doctor.diagnoses_of(error)


def silent(tmp_path, source, name="twin"):
    assert run_watched(write(tmp_path, textwrap.dedent(source), name)) is None


def only(diagnoses, code):
    (found,) = [d for d in diagnoses if d.code == code]
    return found


def run_fixed(tmp_path, suggestion, name="program"):
    target = tmp_path / os.path.basename(suggestion.location.file)
    target.write_text(apply_suggestion(target.read_text(), suggestion))
    error, namespace = run_plain(str(tmp_path / f"{name}.py"))
    assert error is None, error
    return namespace


def reference(tmp_path, source):
    error, namespace = run_plain(write(tmp_path, textwrap.dedent(source), "reference"))
    assert error is None, error
    return namespace


def same(a, b):
    return len(a) == len(b) and all(torch.allclose(x, y, atol=1e-6) for x, y in zip(a, b))


# ---- AD132: a tied weight in two parameter groups -----------------------------------------------------

TIED = """
    import torch
    from torch import nn

    torch.manual_seed(0)
    encoder = nn.Embedding(12, 4)
    body = nn.Linear(4, 4)
    head = nn.Linear(4, 12, bias=False)
    head.weight = encoder.weight
    model = nn.ModuleDict({{"encoder": encoder, "body": body, "head": head}})
    optimizer = torch.optim.Adam([
        {{"params": model["encoder"].parameters(), "lr": 0.05}},
        {{"params": body.parameters()}},
        {groups}
    ], lr=0.01)
    tokens = torch.randint(0, 12, (5,))
    for _ in range(2):
        loss = torch.nn.functional.cross_entropy(head(torch.tanh(body(encoder(tokens)))), tokens)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    weights = [p.detach().clone() for p in (encoder.weight, body.weight, body.bias)]
    """


def test_tied_weight_in_a_later_group_is_left_out_of_it(tmp_path):
    source, diagnoses = diagnose(tmp_path, TIED.format(groups='{"params": list(head.parameters()), "lr": 0.001},  # GROUP'))
    found = only(diagnoses, "AD132")
    assert found.primary.line == marked_line(source, "GROUP")
    assert 'name != "weight"' in found.help[0].replacement
    namespace = run_fixed(tmp_path, found.help[0])
    # Hand-written: the head has no parameter of its own; the tied weight keeps the encoder's group.
    correct = reference(tmp_path, TIED.format(groups='{"params": [], "lr": 0.001},'))
    assert same(namespace["weights"], correct["weights"])
    silent(tmp_path, TIED.format(groups='{"params": [], "lr": 0.001},'))


def test_a_module_in_two_groups_without_tying_keeps_its_own_help(tmp_path):
    # Not tied: the general group's model.parameters() holds the head, the subgroup rule applies.
    _, diagnoses = diagnose(tmp_path, """
        import torch
        from torch import nn

        model = nn.Sequential(nn.Linear(3, 3), nn.Linear(3, 1))
        optimizer = torch.optim.SGD([{"params": model.parameters()}, {"params": model[1].parameters(), "lr": 0.01}],
                                    lr=0.1)
        """)
    found = only(diagnoses, "AD132")
    assert "tied" not in found.help[0].message


# ---- AD149: a helper that unscales every optimizer, inside the stepping loop ----------------------

SCALED = """
    import torch
    from torch import nn

    torch.manual_seed(0)
    actor, critic = nn.Linear(3, 2), nn.Linear(2, 1)
    opts = {{"actor": torch.optim.Adam(actor.parameters(), lr=0.01), "critic": torch.optim.Adam(critic.parameters())}}
    scaler = torch.amp.GradScaler("cpu", init_scale=8.0)


    def unscale_and_clip(all_opts):
        for opt in all_opts:
            scaler.unscale_(opt)
            torch.nn.utils.clip_grad_value_([p for g in opt.param_groups for p in g["params"]], 0.05)


    for _ in range(2):
        loss = critic(torch.relu(actor(torch.randn(6, 3)))).pow(2).mean()
        for opt in opts.values():
            opt.zero_grad()
        scaler.scale(loss).backward()
        for opt in list(opts.values()):
{body}
        scaler.update()
    weights = [p.detach().clone() for p in (*actor.parameters(), *critic.parameters())]
    """


def test_helper_unscaling_every_optimizer_runs_once_before_the_stepping_loop(tmp_path):
    # The helper is given the very list the loop steps, one optimizer at a time.
    source = SCALED.replace("for opt in list(opts.values()):", "for opt in optimizers:").replace(
        "for _ in range(2):", "optimizers = list(opts.values())\n    for _ in range(2):")
    source, diagnoses = diagnose(tmp_path, source.format(
        body="            unscale_and_clip(optimizers)  # CLIP\n            scaler.step(opt)"))
    found = only(diagnoses, "AD149")
    assert found.primary.line == marked_line(source, "CLIP")
    assert found.help[0].replacement.splitlines()[0] == "unscale_and_clip(optimizers)"
    namespace = run_fixed(tmp_path, found.help[0])
    correct_source = SCALED.replace("for opt in list(opts.values()):", "unscale_and_clip(optimizers)\n        for opt in optimizers:") \
        .replace("for _ in range(2):", "optimizers = list(opts.values())\n    for _ in range(2):")
    correct = reference(tmp_path, correct_source.format(body="            scaler.step(opt)"))
    assert same(namespace["weights"], correct["weights"])
    silent(tmp_path, correct_source.format(body="            scaler.step(opt)"))


def test_helper_given_one_optimizer_in_the_loop_is_not_hoisted(tmp_path):
    # A helper that unscales only the optimizer of this pass is right inside the loop: silent.
    silent(tmp_path, SCALED.format(body="            unscale_and_clip([opt])\n            scaler.step(opt)"))


# ---- AD143: a learned tensor in a plain dict attribute of a traced module --------------------------

TRACED = """
    import torch
    from torch import nn


    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.out = nn.Linear(2, 2)
{store}

        def forward(self, z):
            return self.out(z) * self.extra["scale"] + self.extra["shift"]


    torch.manual_seed(0)
    decoder = Decoder()
    z = torch.randn(3, 2)
    traced = torch.jit.trace(decoder, (z,))
    optimizer = torch.optim.SGD(traced.parameters(), lr=0.1)
    for _ in range(2):
        loss = traced(z).pow(2).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    values = [p.detach().clone() for p in traced.parameters()]
    """
PLAIN = ('            self.extra = {"scale": torch.ones(2, requires_grad=True), '
         '"shift": torch.zeros(2, requires_grad=True)}  # STORE')
REGISTERED = ('            self.extra = nn.ParameterDict({"scale": nn.Parameter(torch.ones(2)), '
              '"shift": nn.Parameter(torch.zeros(2))})')


def test_dict_of_learned_tensors_becomes_a_parameter_dict(tmp_path):
    source, diagnoses = diagnose(tmp_path, TRACED.replace("{store}", PLAIN))
    found = only(diagnoses, "AD143")
    assert found.primary.line == marked_line(source, "STORE")
    assert "self.proj" not in " ".join(found.notes)
    assert found.help[0].replacement.startswith("self.extra = nn.ParameterDict(")
    namespace = run_fixed(tmp_path, found.help[0])
    correct = reference(tmp_path, TRACED.replace("{store}", REGISTERED))
    assert len(namespace["values"]) == 4 and same(namespace["values"], correct["values"])
    silent(tmp_path, TRACED.replace("{store}", REGISTERED))


def test_dict_entries_an_optimizer_already_holds_are_advice_naming_the_optimizer(tmp_path):
    # The optimizer was given the dict's values besides the module's parameters: registering them
    # would list them twice, so the change (two statements) is said in words.
    source = TRACED.replace("{store}", PLAIN).replace(
        "traced = torch.jit.trace(decoder, (z,))",
        "opt = torch.optim.SGD(list(decoder.parameters()) + list(decoder.extra.values()), lr=0.1)\n"
        "    traced = torch.jit.trace(decoder, (z,))")
    source, diagnoses = diagnose(tmp_path, source)
    found = only(diagnoses, "AD143")
    assert found.primary.line == marked_line(source, "STORE")
    assert found.help[0].replacement is None and "SGD optimizer" in found.help[0].message


def test_a_half_built_optimizer_alive_does_not_stop_the_diagnosis(tmp_path):
    # An optimizer whose constructor raised before it set param_groups stays alive as long as the
    # exception's traceback does (here kept by the program; elsewhere until the cyclic collector
    # runs). The scan for the optimizers holding the dict's tensors skips it: it once failed on
    # it, and AD143 came or not with the collector's timing (CI of session 42).
    source = TRACED.replace("{store}", PLAIN).replace(
        "traced = torch.jit.trace(decoder, (z,))",
        "try:\n"
        "        torch.optim.SGD(decoder.out.weight, lr=0.1)  # a tensor, not an iterable of them\n"
        "    except TypeError as problem:\n"
        "        kept = problem\n"
        "    opt = torch.optim.SGD(list(decoder.parameters()) + list(decoder.extra.values()), lr=0.1)\n"
        "    traced = torch.jit.trace(decoder, (z,))")
    source, diagnoses = diagnose(tmp_path, source)
    found = only(diagnoses, "AD143")
    assert found.primary.line == marked_line(source, "STORE")
    assert found.help[0].replacement is None and "SGD optimizer" in found.help[0].message


# ---- AD184: cdist under a second derivative -------------------------------------------------------

KERNEL = """
    import torch

    torch.manual_seed(0)
    anchors = torch.randn(2, 5, 3, requires_grad=True)
    offset = torch.randn(3) * 0.1
    points = torch.randn(2, 4, 3, requires_grad=True)
    # one point a hair away from an anchor: the matrix-product form would round its distance to 0
    with torch.no_grad():
        points[0, 0] = anchors[0, 1] - offset + 1e-5
{distances}
    energy = torch.exp(-distances.pow(2)).sum()
    (force,) = torch.autograd.grad(energy, points, create_graph=True)
    force.pow(2).sum().backward()
    grads = [anchors.grad, points.grad]
    """


def test_cdist_under_a_second_derivative_becomes_the_norm_of_the_differences(tmp_path):
    source, diagnoses = diagnose(tmp_path, KERNEL.replace(
        "{distances}", "    distances = torch.cdist(points + offset, anchors)  # CDIST"))
    found = only(diagnoses, "AD184")
    assert found.primary.line == marked_line(source, "CDIST")
    assert "vector_norm((points + offset).unsqueeze(-2) - anchors.unsqueeze(-3)" in found.help[0].replacement
    namespace = run_fixed(tmp_path, found.help[0])
    hand_written = "    distances = ((points + offset)[:, :, None] - anchors[:, None]).pow(2).sum(-1).sqrt()"
    correct = reference(tmp_path, KERNEL.replace("{distances}", hand_written))
    assert same(namespace["grads"], correct["grads"])
    silent(tmp_path, KERNEL.replace("{distances}", hand_written))
