"""OpenNMT-py, issue 2153 ("Extra custom loss"): a user added a classification head after the
Transformer encoder for joint learning and put its loss into `LossComputeBase.__call__`
(onmt/utils/loss.py) as `class_loss, class_stats = self._compute_class_loss(stargets_logits,
stargets_refs); class_loss.backward()`, before the sharded loop; training then failed.  The
loss computation is sharded: `shards()` cuts the decoder's outputs into pieces that are
detached leaves (`v.detach().requires_grad_()`), backpropagates each shard's loss only to those
leaves, and after the last shard calls `torch.autograd.backward(inputs, grads)` once through the
whole network (explained by the maintainers in issue 387).  That final backward runs through
the decoder into the encoder's graph, which `class_loss.backward()` had already freed: "Trying
to backward through the graph a second time".
Re-created with the loss class, its `shards` / `filter_shard_state` helpers and a small
encoder-decoder with the user's classification head; the encoder's output feeds both.
Buggy line: `class_loss.backward()` in `__call__` (the final `torch.autograd.backward` raises).
Source: https://github.com/OpenNMT/OpenNMT-py/issues/2153"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def filter_shard_state(state, shard_size=None):
    for k, v in state.items():
        if shard_size is None:
            yield k, v
        if v is not None:
            v_split = []
            if isinstance(v, torch.Tensor):
                for v_chunk in torch.split(v, shard_size):
                    v_chunk = v_chunk.data.clone()
                    v_chunk.requires_grad = v.requires_grad
                    v_split.append(v_chunk)
            yield k, (v, v_split)


def shards(state, shard_size, eval_only=False):
    if eval_only:
        yield filter_shard_state(state)
    else:
        non_none = dict(filter_shard_state(state, shard_size))
        keys, values = zip(*((k, [v_chunk for v_chunk in v_split]) for k, (_, v_split) in non_none.items()))
        for shard_tensors in zip(*values):
            yield dict(zip(keys, shard_tensors))
        variables = []
        for k, (v, v_split) in non_none.items():
            if isinstance(v, torch.Tensor) and state[k].requires_grad:
                variables.extend(zip(torch.split(state[k], shard_size), [v_chunk.grad for v_chunk in v_split]))
        inputs, grads = zip(*variables)
        torch.autograd.backward(inputs, grads)


class Encoder(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, src):
        return torch.tanh(self.proj(self.emb(src)))


class Decoder(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.attn = nn.Linear(dim, dim)

    def forward(self, tgt, memory_bank):
        query = self.emb(tgt)
        scores = torch.bmm(query, self.attn(memory_bank).transpose(1, 2))
        context = torch.bmm(F.softmax(scores, dim=-1), memory_bank)
        return torch.tanh(query + context)


class NMTModel(nn.Module):
    def __init__(self, vocab=20, dim=8, n_classes=3):
        super().__init__()
        self.encoder = Encoder(vocab, dim)
        self.decoder = Decoder(vocab, dim)
        self.classifier = nn.Linear(dim, n_classes)

    def forward(self, src, tgt):
        memory_bank = self.encoder(src)
        dec_out = self.decoder(tgt, memory_bank)
        stargets_logits = self.classifier(memory_bank.mean(dim=1))
        return dec_out, stargets_logits


class LossComputeBase(nn.Module):
    def __init__(self, generator, criterion):
        super().__init__()
        self.generator = generator
        self.criterion = criterion

    def _compute_loss(self, output, target):
        scores = self.generator(output.reshape(-1, output.size(-1)))
        return self.criterion(scores, target.reshape(-1))

    def _compute_class_loss(self, logits, refs):
        return F.cross_entropy(logits, refs)

    def __call__(self, output, target, stargets_logits, stargets_refs, shard_size=1, normalization=1.0):
        class_loss = self._compute_class_loss(stargets_logits, stargets_refs)
        class_loss.backward()  # missed: ADL019
        shard_state = {"output": output, "target": target}
        total = class_loss.item()
        for shard in shards(shard_state, shard_size):
            loss = self._compute_loss(**shard)
            loss.div(float(normalization)).backward()
            total += loss.item()
        return total


def train(model, loss_compute, optim, batches):
    for src, tgt, tgt_out, refs in batches:
        optim.zero_grad()
        dec_out, stargets_logits = model(src, tgt)
        loss_compute(dec_out, tgt_out, stargets_logits, refs)
        optim.step()


def run():
    torch.manual_seed(0)
    model = NMTModel()
    generator = nn.Linear(8, 20)
    loss_compute = LossComputeBase(generator, nn.CrossEntropyLoss())
    optim = torch.optim.Adam(list(model.parameters()) + list(generator.parameters()), lr=1e-3)
    batches = [(torch.randint(0, 20, (2, 5)), torch.randint(0, 20, (2, 4)),
                torch.randint(0, 20, (2, 4)), torch.randint(0, 3, (2,)))]
    train(model, loss_compute, optim, batches)


if __name__ == "__main__":
    run()
