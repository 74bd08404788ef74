"""embedding-inspector (Stable Diffusion web UI extension): `do_inspect`
looks up the vector of each token of the inspected text in the text
encoder's token embedding and plots it,
`plt.plot(x.numpy(), emb_vec[u].numpy())`.  The vectors come straight from
the embedding weight, which requires grad once the web UI loads the model
trainable, and inspecting fails with "Can't call numpy() on Tensor that
requires grad. Use tensor.detach().numpy() instead."  Re-created as the
inspector's lookup and a plot helper that takes numpy arrays (matplotlib is
not used).
Buggy line: `plot(x.numpy(), emb_vec[u].numpy())` in `do_inspect`.
Source: https://github.com/tkalayci71/embedding-inspector/issues/22"""
import torch
import torch.nn as nn


class TextEncoder(nn.Module):
    def __init__(self, vocab=64, dim=12):
        super().__init__()
        self.token_embedding = nn.Embedding(vocab, dim)


def plot(xs, ys, lines):
    lines.append((xs.tolist(), ys.tolist()))


def do_inspect(encoder, token_ids, lines):
    emb_vec = encoder.token_embedding.weight[token_ids]
    x = torch.arange(emb_vec.shape[1])
    for u in range(len(token_ids)):
        plot(x.numpy(), emb_vec[u].numpy(), lines)  # missed: ADL036
    return emb_vec.norm(dim=1)


def run():
    torch.manual_seed(0)
    encoder = TextEncoder()
    lines = []
    do_inspect(encoder, torch.tensor([3, 17, 42]), lines)
