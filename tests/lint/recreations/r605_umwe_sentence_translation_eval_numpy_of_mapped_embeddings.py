"""UMWE (unsupervised multilingual word embeddings, built on MUSE): after
training the mappings, `Evaluator.all_eval` runs word translation and then
sentence translation retrieval on Europarl.  The evaluator maps each
language's embedding table through its trained mapping and hands the result
to `get_sent_translation_accuracy`, which starts with
`emb2 = emb2.cpu().numpy()`.  The mapped embeddings are the output of the
mapping layer and require grad, so the evaluation fails with "Can't call
numpy() on Variable that requires grad.  Use var.detach().numpy() instead."
(the maintainer: legacy code from before PyTorch 0.4; change it to
`emb2.cpu().detach().numpy()`).  Re-created as the evaluator's pieces: the
embedding tables, the linear mapping, `sent_translation` and
`get_sent_translation_accuracy` (bag-of-words sentence vectors and nearest
neighbour retrieval in numpy).  Raises at the sentence evaluation.
Buggy line: `emb2 = emb2.cpu().numpy()` in `get_sent_translation_accuracy`
(and the same for `emb1`).
Source: https://github.com/ccsasuke/umwe/issues/5"""
import numpy as np
import torch
import torch.nn as nn


def get_sent_translation_accuracy(data, emb1, emb2, n_keys=20, n_queries=5):
    emb1 = emb1.cpu().detach().numpy()
    emb2 = emb2.cpu().numpy()  # missed: ADL036 (the caller runs no backward: no evidence that gradients are on)
    sents1 = np.stack([emb1[ids].mean(0) for ids in data["src"][:n_keys]])
    sents2 = np.stack([emb2[ids].mean(0) for ids in data["tgt"][:n_keys]])
    sents1 /= np.linalg.norm(sents1, axis=1, keepdims=True)
    sents2 /= np.linalg.norm(sents2, axis=1, keepdims=True)
    scores = sents2[:n_queries] @ sents1.T
    return float((scores.argmax(1) == np.arange(n_queries)).mean() * 100)


class Evaluator:
    def __init__(self, src_emb, tgt_emb, src_mapping, tgt_mapping, europarl):
        self.src_emb, self.tgt_emb = src_emb, tgt_emb
        self.src_mapping, self.tgt_mapping = src_mapping, tgt_mapping
        self.europarl_data = europarl

    def sent_translation(self, to_log):
        src_emb = self.src_mapping(self.src_emb.weight)
        tgt_emb = self.tgt_mapping(self.tgt_emb.weight)
        to_log["sent_precision_at_1"] = get_sent_translation_accuracy(self.europarl_data, src_emb, tgt_emb)

    def all_eval(self, to_log):
        self.sent_translation(to_log)


def run():
    torch.manual_seed(0)
    vocab, dim = 50, 8
    src_emb, tgt_emb = nn.Embedding(vocab, dim), nn.Embedding(vocab, dim)
    src_emb.weight.requires_grad = False
    tgt_emb.weight.requires_grad = False
    src_mapping, tgt_mapping = nn.Linear(dim, dim, bias=False), nn.Linear(dim, dim, bias=False)
    europarl = {"src": [torch.randint(0, vocab, (6,)).numpy() for _ in range(20)]}
    europarl["tgt"] = europarl["src"]
    Evaluator(src_emb, tgt_emb, src_mapping, tgt_mapping, europarl).all_eval({})
