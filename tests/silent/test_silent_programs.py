"""Silent bugs (no exception, wrong training), one program each in programs/NAME.py with the line
to change marked `# PRIMARY` and a hand-written correct computation in references/NAME.py.
The doctor warns once with the expected code at that line, gradients and results under the
doctor are those of a plain run, and every help with code, applied as printed, gives the
reference's `result` (which the buggy program does not)."""

from __future__ import annotations

import os

import pytest
import torch

from autograd_doctor.analysis.fixes import apply_replacement
from helpers import marked_line, run_plain, run_program

HERE = os.path.dirname(os.path.abspath(__file__))

CASES = {
    "optimizer_parameter_replaced": "AD207",
    "optimizer_module_rebound": "AD207",
    "optimizer_submodule_replaced": "AD207",
    "loss_term_detached": "AD206",
    "loss_term_item_in_loop": "AD206",
    "loss_term_number_rebound": "AD206",
    "gradient_penalty_without_create_graph": "AD206",
    "derivative_loss_module_without_create_graph": "AD206",
    "clip_norm_before_backward": "AD208",
    "clip_value_after_step": "AD208",
    "gradients_never_cleared": "AD209",
    "amp_clip_before_unscale": "AD210",
    "gan_generator_term_detached": "AD211",
    "value_prediction_detached": "AD211",
    "checkpoint_frozen_embeddings": "AD301",
    "encoder_features_detached": "AD301",
    "best_weights_state_dict_not_copied": "AD217",
    "hand_written_descent_gradients_not_cleared": "AD218",
    "center_loss_not_in_optimizer": "AD213",
    "multitask_loss_weights_not_in_optimizer": "AD213",
    "where_sqrt_activation_in_module": "AD220",
    "masked_fill_log_of_zero_probabilities": "AD220",
    "actor_action_drawn_with_torch_normal": "AD219",
    "activations_quantised_with_round": "AD219",
    "mean_teacher_consistency_against_itself": "AD224",
    "pairwise_distances_sqrt_on_diagonal": "AD220",
    "classifier_nll_of_raw_scores": "AD225",
    "policy_scores_detached_in_helper": "AD301",
    "actor_critic_advantage_not_detached": "AD226",
    "latent_prediction_target_not_detached": "AD227",
    "q_learning_target_not_detached": "AD227",
    "log_scale_exponentiated_once_in_init": "AD228",
    "critic_steps_on_actor_loss_gradients": "AD230",
    "position_embedding_read_through_data": "AD301",
}


def _read(folder: str, name: str) -> str:
    with open(os.path.join(HERE, folder, f"{name}.py"), encoding="utf-8") as stream:
        return stream.read()


def _same(first: list, second: list) -> bool:
    return len(first) == len(second) and all(
        a.shape == b.shape and torch.allclose(a, b, rtol=1e-5, atol=1e-6) for a, b in zip(first, second))


def test_every_program_is_a_case():
    programs = {name[:-3] for name in os.listdir(os.path.join(HERE, "programs")) if name.endswith(".py")}
    assert programs == set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_warning_names_the_line_to_change(tmp_path, name):
    outcome = run_program(tmp_path, _read("programs", name), f"{name}.py")
    assert outcome.error is None
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == CASES[name]]
    assert len(outcome.warnings) == 1
    assert diagnosis.severity == "warning"
    assert diagnosis.primary.line == outcome.line("PRIMARY")
    assert str(diagnosis).startswith(f"warning[{CASES[name]}]")
    plain = run_plain(tmp_path, _read("programs", name), "plain.py")
    # Bitwise the same (NaN where the plain run has NaN: a NaN gradient is the bug of some cases).
    assert all(torch.allclose(a, b, rtol=0, atol=0, equal_nan=True)
               for a, b in zip(outcome.namespace["result"], plain["result"]))


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_help_applied_gives_the_reference_result(tmp_path, name):
    source = _read("programs", name)
    outcome = run_program(tmp_path, source, f"{name}.py")
    (diagnosis,) = [d for d in outcome.diagnoses if d.code == CASES[name]]
    expected = run_plain(tmp_path, _read("references", name), "reference.py")["result"]
    assert not _same(outcome.namespace["result"], expected)  # the bug changes what trains
    applicable = [s for s in diagnosis.help if s.replacement and s.location]
    assert applicable and diagnosis.help[0] is applicable[0]
    for index, suggestion in enumerate(applicable):
        # The first help changes the marked line (a help that moves it starts where it goes).
        first, last = suggestion.location.line, suggestion.location.end_line or suggestion.location.line
        assert first <= marked_line(source, "PRIMARY") <= last or index > 0
        fixed = apply_replacement(source, suggestion.location, suggestion.replacement)
        fixed_outcome = run_program(tmp_path, fixed, f"fixed_{index}.py")
        assert fixed_outcome.error is None and not fixed_outcome.diagnoses, (suggestion.message, fixed)
        assert _same(fixed_outcome.namespace["result"], expected), (suggestion.message, fixed)
