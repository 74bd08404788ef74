"""Qwen-VL-Series-Finetune's patched forward scatters the vision tower's
features into the token embeddings in place: `flat =
inputs_embeds.view(-1, d)`, then `flat.index_copy_(0, row_idx, img)`.  With
QLoRA and gradient checkpointing the embedding table is frozen and
`enable_input_require_grads()` registers a forward hook that calls
`output.requires_grad_(True)` on the embeddings: they are then a leaf that
requires grad, and the in-place copy into its view fails ("a view of a leaf
Variable that requires grad is being used in an in-place operation").  The
fix is the out-of-place `flat = flat.index_copy(0, row_idx, img)`.
Buggy line: `flat.index_copy_(...)` in `VisionLanguageModel.forward`.
Expected finding: ADL014 (an in-place write to a view of a leaf that
requires grad).
Source: https://github.com/2U1/Qwen-VL-Series-Finetune/pull/178"""
import torch
import torch.nn as nn


class VisionLanguageModel(nn.Module):
    def __init__(self, vocab=20, dim=4, image_token_id=1):
        super().__init__()
        self.image_token_id = image_token_id
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.visual = nn.Linear(6, dim)
        self.lm_head = nn.Linear(dim, vocab)

    def get_input_embeddings(self):
        return self.embed_tokens

    def enable_input_require_grads(self):
        def make_inputs_require_grads(module, input, output):
            output.requires_grad_(True)

        self.get_input_embeddings().register_forward_hook(make_inputs_require_grads)

    def forward(self, input_ids, pixel_values):
        inputs_embeds = self.embed_tokens(input_ids)
        image_embeds = self.visual(pixel_values)
        flat = inputs_embeds.view(-1, inputs_embeds.shape[-1])
        row_idx = (input_ids.view(-1) == self.image_token_id).nonzero().squeeze(-1)
        flat.index_copy_(0, row_idx, image_embeds)  # missed: ADL014
        return self.lm_head(inputs_embeds)


def prepare_for_qlora(model):
    model.embed_tokens.weight.requires_grad_(False)
    model.enable_input_require_grads()
    return model


def run():
    torch.manual_seed(0)
    model = prepare_for_qlora(VisionLanguageModel())
    input_ids = torch.tensor([[3, 1, 1, 5]])
    pixel_values = torch.randn(2, 6)
    logits = model(input_ids, pixel_values)
    logits.sum().backward()
