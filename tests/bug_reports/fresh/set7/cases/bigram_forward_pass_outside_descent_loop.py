"""Character bigram model trained by hand (a course notebook): the forward pass (one-hot inputs
times W, softmax, negative log-likelihood) is computed once, and the gradient-descent loop only
runs the backward pass and the update; the second iteration backpropagates through the graph that
the first backward freed.
Source: https://github.com/karpathy/nn-zero-to-hero/issues/31 ("Trying to backward through the
graph a second time" with `W.grad = None; loss.backward(); W.data += -0.1 * W.grad`; the forward
pass has to be run again in each iteration).
expect: raises"""
import torch
import torch.nn.functional as F

g = torch.Generator().manual_seed(2147483647)
words = ["emma", "olivia", "ava", "isabella", "sophia"]
chars = sorted(set("".join(words)))
stoi = {c: i + 1 for i, c in enumerate(chars)}
stoi["."] = 0
xs, ys = [], []
for w in words:
    letters = ["."] + list(w) + ["."]
    for a, b in zip(letters, letters[1:]):
        xs.append(stoi[a])
        ys.append(stoi[b])
xs, ys = torch.tensor(xs), torch.tensor(ys)
n_chars = len(stoi)
W = torch.randn((n_chars, n_chars), generator=g, requires_grad=True)

xenc = F.one_hot(xs, num_classes=n_chars).float()
logits = xenc @ W
counts = logits.exp()
probs = counts / counts.sum(1, keepdim=True)
loss = -probs[torch.arange(len(ys)), ys].log().mean()
losses = []
for k in range(5):
    W.grad = None
    loss.backward()
    W.data += -10 * W.grad
    losses.append(loss.item())
result = {"W": W.detach().clone(), "losses": torch.tensor(losses)}
