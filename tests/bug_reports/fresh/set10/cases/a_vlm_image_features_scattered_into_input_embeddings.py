"""LoRA fine-tuning of a vision-language model (MiniCPM-o's `get_vllm_embedding`, trained through
LLaMA-Factory): the language model is frozen and gradient checkpointing calls
`enable_input_require_grads()`, a forward hook that does `output.requires_grad_(True)` on the token
embeddings. Those embeddings come from a frozen table, so they are a leaf, and the hook makes it a
leaf that requires grad. The model then writes each sample's image features into its row of that
leaf with `cur_vllm_emb.scatter_(0, image_indices, vision_hidden_states)`: `cur_vllm_emb` is a view
of the leaf, and PyTorch raises "a view of a leaf Variable that requires grad is being used in an
in-place operation".
Source: https://github.com/OpenBMB/MiniCPM-V/issues/730 ("LLama-Factory微调MiniCPM-o, 报错RuntimeError:
a view of a leaf Variable that requires grad is being used in an in-place operation", raised by the
`cur_vllm_emb.scatter_(...)` in `get_vllm_embedding`).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, DIM, IMAGE_TOKENS = 20, 8, 3


class TinyVLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, DIM)
        self.vision = nn.Linear(12, DIM)            # trainable resampler / projector
        self.lm = nn.Linear(DIM, DIM)
        self.lm_head = nn.Linear(DIM, VOCAB)
        self.lora_a = nn.Linear(DIM, 2, bias=False)  # the LoRA adapter on the frozen language model
        self.lora_b = nn.Linear(2, DIM, bias=False)

    def get_vllm_embedding(self, input_ids, pixel_features, image_bound):
        vision_hidden_states = self.vision(pixel_features)       # [B, IMAGE_TOKENS, DIM]
        vllm_embedding = self.embed_tokens(input_ids)             # [B, T, DIM]
        for i in range(len(input_ids)):
            cur_vllm_emb = vllm_embedding[i]
            image_indices = torch.arange(image_bound[i], image_bound[i] + IMAGE_TOKENS)
            cur_vllm_emb.scatter_(0, image_indices.view(-1, 1).repeat(1, DIM), vision_hidden_states[i])
        return vllm_embedding

    def forward(self, input_ids, pixel_features, image_bound):
        hidden = self.get_vllm_embedding(input_ids, pixel_features, image_bound)
        hidden = torch.tanh(self.lm(hidden) + self.lora_b(self.lora_a(hidden)))
        return self.lm_head(hidden)


model = TinyVLM()
for name, parameter in model.named_parameters():          # PEFT: only the adapter and the resampler train
    parameter.requires_grad = name.startswith(("lora_", "vision"))
# transformers' enable_input_require_grads(), called for gradient checkpointing with PEFT:
model.embed_tokens.register_forward_hook(lambda module, inputs, output: output.requires_grad_(True))
optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)

losses = []
for step in range(3):
    input_ids = torch.randint(0, VOCAB, (2, 7))
    pixel_features = torch.randn(2, IMAGE_TOKENS, 12)
    image_bound = [1, 2]
    logits = model(input_ids, pixel_features, image_bound)
    loss = F.cross_entropy(logits[:, :-1].reshape(-1, VOCAB), input_ids[:, 1:].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": losses, "params": [p.detach().clone() for p in model.parameters() if p.requires_grad]}
