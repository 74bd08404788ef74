"""Loading learned concept tokens into a text-to-image pipeline (google/inspiration_tree, utils.py,
`load_tokens`): the new tokens are added to the vocabulary, the text encoder's token embedding is
resized, and each learned vector is written into its row with
`token_embedding.weight[index] = vector`. The embedding weight is a parameter that requires grad,
and the row is a view of it: PyTorch refuses the in-place write, and loading fails before any
image is generated.
Source: https://github.com/google/inspiration_tree/issues/25 ("RuntimeError: a view of a leaf
Variable that requires grad is being used in an in-place operation."; the fix reported there and
confirmed by others: do the loading under `with torch.no_grad():`).
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)

VOCAB, DIM, SEQ = 12, 8, 4


class TextEncoder(nn.Module):
    def __init__(self, vocab_size):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab_size, DIM)
        self.layer = nn.Linear(DIM, DIM)

    def resize_token_embeddings(self, vocab_size):
        old = self.token_embedding
        self.token_embedding = nn.Embedding(vocab_size, DIM)
        with torch.no_grad():
            self.token_embedding.weight[: old.num_embeddings] = old.weight

    def forward(self, ids):
        return torch.tanh(self.layer(self.token_embedding(ids))).mean(dim=1)


vocabulary = {f"word{i}": i for i in range(VOCAB)}
text_encoder = TextEncoder(VOCAB)


def load_tokens(encoder, vocab, learned):
    for token in learned:
        vocab[token] = len(vocab)
    encoder.resize_token_embeddings(len(vocab))
    for token, vector in learned.items():
        index = vocab[token]
        encoder.token_embedding.weight[index] = vector


learned_tokens = {"<v1>": torch.randn(DIM), "<v2>": torch.randn(DIM)}
load_tokens(text_encoder, vocabulary, learned_tokens)

prompts = [["word1", "<v1>", "word3", "word4"], ["<v2>", "word2", "<v1>", "word0"]]
ids = torch.tensor([[vocabulary[t] for t in prompt] for prompt in prompts])
with torch.no_grad():
    conditioning = text_encoder(ids)

result = {"conditioning": conditioning, "embedding": text_encoder.token_embedding.weight.detach().clone()}
