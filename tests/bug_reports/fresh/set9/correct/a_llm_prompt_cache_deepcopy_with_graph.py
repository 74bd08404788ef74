"""Re-using the key/value cache of a shared system prompt across several generations of a causal
language model (the prompt-reuse recipe of transformers' KV-cache docs, `prompt_cache =
model(**inputs, past_key_values=DynamicCache()).past_key_values`, then
`copy.deepcopy(prompt_cache)` for each new question): the prompt's forward pass runs with gradients
on, so the cached keys and values are results of the graph, not leaves, and `copy.deepcopy` raises
"Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol".
Source: https://github.com/huggingface/huggingface-llama-recipes/issues/33 ("Unable to deep copy
past_key_values"; the cause found in huggingface/transformers#32681: "tensors with grad are not
leaf tensors so the forward should be done with `no_grad`", and the recipe was updated to run the
prompt's forward under `torch.no_grad()`).
expect: raises"""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class DynamicCache:
    def __init__(self):
        self.keys, self.values = None, None

    def update(self, k, v):
        self.keys = k if self.keys is None else torch.cat([self.keys, k], dim=1)
        self.values = v if self.values is None else torch.cat([self.values, v], dim=1)
        return self.keys, self.values


class TinyCausalLM(nn.Module):
    def __init__(self, vocab_size=24, dim=16):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.q, self.k, self.v = nn.Linear(dim, dim), nn.Linear(dim, dim), nn.Linear(dim, dim)
        self.lm_head = nn.Linear(dim, vocab_size)

    def forward(self, input_ids, past_key_values):
        h = self.embed(input_ids)
        past = 0 if past_key_values.keys is None else past_key_values.keys.shape[1]
        keys, values = past_key_values.update(self.k(h), self.v(h))
        scores = self.q(h) @ keys.transpose(1, 2) / h.shape[-1] ** 0.5
        n, m = h.shape[1], keys.shape[1]
        causal = torch.arange(m)[None, :] > (torch.arange(n)[:, None] + past)
        scores = scores.masked_fill(causal, float("-inf"))
        return self.lm_head(h + F.softmax(scores, dim=-1) @ values), past_key_values

    @torch.no_grad()
    def generate(self, input_ids, past_key_values, max_new_tokens):
        cached = past_key_values.keys.shape[1]
        logits, cache = self(input_ids[:, cached:], past_key_values)
        out = input_ids
        for _ in range(max_new_tokens):
            next_token = logits[:, -1].argmax(-1, keepdim=True)
            out = torch.cat([out, next_token], dim=1)
            logits, cache = self(next_token, cache)
        return out


model = TinyCausalLM()
model.eval()
system_prompt = torch.randint(0, 24, (1, 6))
prompt_cache = DynamicCache()
with torch.no_grad():
    prompt_cache = model(system_prompt, past_key_values=prompt_cache)[1]

responses = []
for question in (torch.randint(0, 24, (1, 4)), torch.randint(0, 24, (1, 5))):
    new_inputs = torch.cat([system_prompt, question], dim=1)
    past_key_values = copy.deepcopy(prompt_cache)
    responses.append(model.generate(new_inputs, past_key_values, max_new_tokens=5))
result = {"responses": responses}
