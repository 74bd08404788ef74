"""Qwen3-VL adds "deepstack" visual features to the hidden states of the
first decoder layers: `_deepstack_process` writes
`hidden_states[visual_pos_masks, :] = local_this` into the layer's output.
Under tensor parallelism the layer's output comes out of a custom autograd
`Function` that returns its input as is, and PyTorch forbids writing in
place into such an output ("Output 0 of ... is a view and is being modified
inplace.  This view was created inside a custom Function (or because an
input was returned as-is)").  The fix clones `hidden_states` before the
write.
Buggy line: `hidden_states[visual_pos_masks, :] = local_this` in
`TextModel._deepstack_process`.
Expected finding: ADL015 there (a view that may not be written in place).
Source: https://github.com/huggingface/transformers/pull/41535"""
import torch
import torch.nn as nn


class _ReduceFromModelParallelRegion(torch.autograd.Function):
    """All-reduce in the forward pass, identity in the backward; one rank here."""

    @staticmethod
    def forward(ctx, input_):
        return input_

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


class RowParallelLinear(nn.Linear):
    def forward(self, x):
        return _ReduceFromModelParallelRegion.apply(super().forward(x))


class DecoderLayer(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.mlp_in = nn.Linear(dim, 2 * dim)
        self.mlp_out = RowParallelLinear(2 * dim, dim)

    def forward(self, hidden_states):
        return self.mlp_out(torch.relu(self.mlp_in(hidden_states)))


class TextModel(nn.Module):
    def __init__(self, dim=6, num_layers=2):
        super().__init__()
        self.layers = nn.ModuleList(DecoderLayer(dim) for _ in range(num_layers))

    def _deepstack_process(self, hidden_states, visual_pos_masks, visual_embeds):
        visual_pos_masks = visual_pos_masks.to(hidden_states.device)
        local_this = hidden_states[visual_pos_masks, :] + visual_embeds
        hidden_states[visual_pos_masks, :] = local_this  # expect: ADL015
        return hidden_states

    def forward(self, inputs_embeds, visual_pos_masks, deepstack_visual_embeds):
        hidden_states = inputs_embeds
        for layer_idx, decoder_layer in enumerate(self.layers):
            hidden_states = decoder_layer(hidden_states)
            if layer_idx < len(deepstack_visual_embeds):
                hidden_states = self._deepstack_process(
                    hidden_states, visual_pos_masks, deepstack_visual_embeds[layer_idx])
        return hidden_states


def run():
    torch.manual_seed(0)
    model = TextModel()
    inputs_embeds = torch.randn(2, 5, 6)
    visual_pos_masks = torch.tensor([[True, True, False, False, False]] * 2)
    deepstack = [torch.randn(4, 6, requires_grad=True)]
    out = model(inputs_embeds, visual_pos_masks, deepstack)
    out.pow(2).mean().backward()
