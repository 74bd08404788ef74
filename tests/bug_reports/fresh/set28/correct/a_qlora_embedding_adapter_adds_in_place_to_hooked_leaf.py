"""QLoRA-style fine-tuning of a causal LM with a LoRA adapter on the token embeddings (PEFT's
`lora.Embedding`). `prepare_model_for_kbit_training` freezes the base model and calls
`enable_input_require_grads()`, which registers a forward hook on the input embedding module
doing `output.requires_grad_(True)` so that gradient checkpointing has an input that requires
grad. `get_peft_model` then wraps that same embedding as the adapter's `base_layer`. Inside the
adapter, `result = self.base_layer(x)` is therefore a fresh leaf that requires grad, and the
adapter's `result += (after_A @ embedding_B) * scaling` raises "RuntimeError: a leaf Variable
that requires grad is being used in an in-place operation." Merged fix (peft#1372): the
out-of-place `result = result + (after_A @ embedding_B) * scaling`.
Source: https://github.com/huggingface/peft/pull/1372
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TinyCausalLM(nn.Module):
    def __init__(self, vocab=32, dim=8):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 16), nn.GELU(), nn.Linear(16, dim))
        self.norm = nn.LayerNorm(dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)

    def get_input_embeddings(self):
        return self.embed_tokens

    def enable_input_require_grads(self):
        def make_inputs_require_grads(module, input, output):
            output.requires_grad_(True)

        self._require_grads_hook = self.get_input_embeddings().register_forward_hook(make_inputs_require_grads)

    def forward(self, input_ids, labels):
        h = self.embed_tokens(input_ids)
        h = self.norm(h + self.mlp(h))
        logits = self.lm_head(h)
        return F.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)), labels[:, 1:].reshape(-1))


class LoraEmbedding(nn.Module):
    def __init__(self, base_layer, r=4, lora_alpha=8):
        super().__init__()
        self.base_layer = base_layer
        self.scaling = lora_alpha / r
        self.lora_embedding_A = nn.Parameter(torch.randn(r, base_layer.num_embeddings) * 0.1)
        self.lora_embedding_B = nn.Parameter(torch.zeros(base_layer.embedding_dim, r))

    def forward(self, x):
        result = self.base_layer(x)
        embedding_A = self.lora_embedding_A.T
        embedding_B = self.lora_embedding_B.T
        after_A = F.embedding(x, embedding_A)
        result = result + (after_A @ embedding_B) * self.scaling
        return result


def prepare_model_for_kbit_training(model):
    for param in model.parameters():
        param.requires_grad = False
    model.enable_input_require_grads()
    return model


def get_peft_model(model):
    model.embed_tokens = LoraEmbedding(model.embed_tokens)
    return model


model = TinyCausalLM()
model = prepare_model_for_kbit_training(model)
model = get_peft_model(model)
trainable = [p for p in model.parameters() if p.requires_grad]
optimizer = torch.optim.AdamW(trainable, lr=5e-2)

batches = [torch.randint(0, 32, (4, 7)) for _ in range(3)]
losses = []
for epoch in range(2):
    for input_ids in batches:
        optimizer.zero_grad()
        loss = model(input_ids, labels=input_ids)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())

result = {
    "losses": torch.tensor(losses),
    "lora": [p.detach().clone() for p in trainable],
}
