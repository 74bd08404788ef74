"""Public autograd bug reports, each re-created in programs/<name>.py (with the report's URL
and the line its accepted answer changes marked `# PRIMARY`), and, where the doctor's help is
a change to the code, a hand-written correct version in references/<name>.py.

`compare` lists expressions evaluated in both programs' globals after they ran: what the
program with the help applied must compute. `references` maps a help's index to another
reference file where that help is a different but right change.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))


@dataclass
class Report:
    name: str
    url: str
    pattern: str
    code: str
    compare: list[str] = field(default_factory=list)  # empty: the helps are advice, not code
    # The line the doctor's primary location is on, when it is not the PRIMARY line: the help's
    # change is then at the PRIMARY line (see test_the_help_changes_the_line_the_answer_changes).
    primary_marker: str = "PRIMARY"
    references: dict[int, str] = field(default_factory=dict)

    @property
    def source(self) -> str:
        with open(os.path.join(HERE, "programs", f"{self.name}.py")) as handle:
            return handle.read()

    def reference(self, index: int) -> str:
        name = self.references.get(index, self.name)
        with open(os.path.join(HERE, "references", f"{name}.py")) as handle:
            return handle.read()


REPORTS = [
    Report("gan_sin_step_before_g_backward", "https://github.com/pytorch/pytorch/issues/39141",
           "GAN: opt_D.step() before G_loss.backward() through D", "AD103",
           ["[*G.parameters()]", "[*D.parameters()]"],
           # G_loss has its own optimizer and reaches D's stepped weights: recomputing comes first
           references={0: "gan_sin_step_before_g_backward_recomputed"}),
    Report("maddpg_critic_step_before_actor_backward", "https://github.com/starry-sky6688/MADDPG/issues/27",
           "actor-critic: critic step before the actor's backward through the critic", "AD103",
           ["[*actor.parameters()]", "[*critic.parameters()]"],
           references={1: "maddpg_critic_step_before_actor_backward_updated_critic"}),
    Report("gan_discriminator_inplace_leakyrelu_dropout", "https://github.com/dreamgonfly/GAN-tutorial/issues/1",
           "LeakyReLU(inplace=True) then Dropout(inplace=True) in one nn.Sequential", "AD101", ["grads"]),
    Report("resnet_residual_overwrites_conv_input", "http://discuss.pytorch.org/t/in-place-operation-and-resnet/10724",
           "`x += residual` overwrites conv_1's saved input", "AD101", ["grads"]),
    Report("branch_reads_x_then_add",
           "https://discuss.pytorch.org/t/when-would-the-error-one-of-the-variables-needed-for-gradient-computation-has-been-modified-occur/11976/2",
           "a branch reads x, then `x += ...`", "AD101", ["grads"]),
    Report("sigmoid_output_item_assignment", "https://github.com/pytorch/pytorch/issues/9391",
           "`b[1] = 2` on a sigmoid's output", "AD101", ["a.grad", "b"]),
    Report("two_inplace_relu_modules", "https://github.com/pytorch/pytorch/issues/34429",
           "two ReLU(inplace=True) modules in a row", "AD101", ["grads"]),
    Report("fpn_laterals_add_inplace", "https://github.com/lyongo/NWPU-MOC/issues/4",
           "FPN: `laterals[i - 1] += F.interpolate(...)` into a list of ReLU outputs", "AD101", ["grads"]),
    Report("matmul_input_row_update_in_loop", "https://www.yongfengli.tk/2018/04/13/inplace-operation-in-pytorch.html",
           "`b[i] = b[i] + 1` in a loop after mm saved b", "AD101", ["param.grad"]),
    Report("moe_router_weights_normalized_inplace", "https://github.com/databricks/megablocks/pull/70",
           "MoE router: `expert_weights /= torch.norm(expert_weights, ...)`", "AD101", ["grads"]),
    Report("detach_alias_written_in_place",
           "https://androidkt.com/one-of-the-variables-needed-for-gradient-computation-has-been-modified-by-an-inplace-operation/",
           "a write through `c = b.detach()` into exp()'s saved output", "AD205", ["a.grad", "c"],
           primary_marker="WRITE"),
    Report("lstm_hidden_kept_on_module", "https://github.com/sgadgil6/cnslab_fmri/issues/4",
           "LSTM hidden state kept on self across batches", "AD302", ["params"]),
    Report("rnn_h_state_not_detached", "https://github.com/MorvanZhou/PyTorch-Tutorial/issues/57",
           "RNN hidden state carried across steps without detach", "AD302", ["params"]),
    Report("knowledge_neurons_weight_column_update", "https://github.com/Hunter-DDM/knowledge-neurons/issues/14",
           "`weight[:, pos] -= ...` then `+= ...` on a parameter outside no_grad", "AD102", ["edited"]),
    Report("word_lm_manual_sgd_add_", "https://github.com/pytorch/examples/pull/779",
           "manual SGD `p.add_(p.grad, alpha=-lr)` on parameters", "AD102", ["params"]),
    Report("sparse_llm_leaf_gradient_step", "https://github.com/BaiTheBest/SparseLLM/issues/13",
           "`s_batch -= lr * s_batch.grad` on a leaf", "AD102", ["s"]),
    Report("fastbook_weights_row_scale", "https://github.com/fastai/fastbook/pull/471",
           "`weights[0] *= 1.0001` on a leaf made with requires_grad_()", "AD102", ["grads", "weights"]),
    Report("inplace_relu_on_leaf_input", "https://github.com/pytorch/pytorch/issues/727",
           "`F.relu(x, inplace=True)` on an input that requires grad", "AD102", ["grads"]),
    Report("ppo_policy_clamp_chunk_output", "https://github.com/toshikwa/gail-airl-ppo.pytorch/issues/13",
           "`log_stds.clamp_()` on a chunk() output", "AD104", ["grads"]),
    Report("tensor_of_two_cosines", "https://discuss.pytorch.org/t/gradient-is-lost-when-use-torch-tensor-t1-t2/23261",
           "`torch.tensor([cos_a, cos_b])` drops the graph", "AD304", ["grads"]),
    Report("loss_on_argmax_predictions", "https://php.bkmy88.com/faq/1835025.html",
           "loss on argmax predictions: element 0 does not require grad", "AD301"),
    Report("deepcopy_module_holding_graph_tensor", "https://github.com/pytorch/pytorch/issues/54580",
           "deepcopy of a module that kept a graph tensor on self", "AD303", ["model_copy.exp"],
           primary_marker="ERROR"),
]
