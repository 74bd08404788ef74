"""End-to-end ASR (gentaiscool/end2end-asr-pytorch), pull request 41 ("Fix OOM issue during
validation"): `Trainer.train` (trainer/asr/trainer.py) trains for an epoch, then runs every
validation loader after `model.eval()` with the same `pred, gold, hyp_seq, gold_seq =
model(src, src_lengths, tgt, verbose=False)` and `loss, num_correct = calculate_metrics(...)` as
in training, but outside `torch.no_grad()`: every validation batch records a graph, and the
validation ran out of GPU memory where training did not.  The pull request ("no need to store
gradients during validation") wraps the validation in `torch.no_grad()`.
Re-created with the trainer class, a `calculate_metrics` helper and a small model returning the
same four values (predictions, gold labels, hypothesis and gold sequences), on random features.
Nothing raises: `bug_shows()` shows the validation loss carries a graph.
Buggy line: the validation forward `pred, gold, hyp_seq, gold_seq = model(...)` after
`model.eval()`.
Source: https://github.com/gentaiscool/end2end-asr-pytorch/pull/41"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def calculate_metrics(pred, gold, smoothing=0.0):
    loss = F.cross_entropy(pred.reshape(-1, pred.size(-1)), gold.reshape(-1), label_smoothing=smoothing)
    num_correct = pred.argmax(-1).eq(gold).sum().item()
    return loss, num_correct


class Transformer(nn.Module):
    def __init__(self, feat_dim=5, vocab=7, hidden=12):
        super().__init__()
        self.encoder = nn.GRU(feat_dim, hidden, batch_first=True)
        self.output = nn.Linear(hidden, vocab)

    def forward(self, src, src_lengths, tgt, verbose=False):
        enc, _ = self.encoder(src)
        pred = self.output(enc[:, :tgt.size(1)])
        hyp_seq = pred.argmax(-1)
        return pred, tgt, hyp_seq, tgt


class Trainer:
    def train(self, model, train_loader, valid_loader_list, opt, start_epoch, num_epochs, smoothing=0.0):
        history = []
        for epoch in range(start_epoch, num_epochs):
            total_loss = 0
            model.train()
            for i, data in enumerate(train_loader):
                src, tgt, src_lengths = data
                opt.zero_grad()
                pred, gold, hyp_seq, gold_seq = model(src, src_lengths, tgt, verbose=False)
                loss, num_correct = calculate_metrics(pred, gold, smoothing=smoothing)
                loss.backward()
                opt.step()
                total_loss += loss.item()

            model.eval()
            valid_losses = []
            for ind in range(len(valid_loader_list)):
                valid_loader = valid_loader_list[ind]
                total_valid_loss = 0
                for i, data in enumerate(valid_loader):
                    src, tgt, src_lengths = data
                    pred, gold, hyp_seq, gold_seq = model(src, src_lengths, tgt, verbose=False)  # missed: ADL031
                    loss, num_correct = calculate_metrics(pred, gold, smoothing=smoothing)
                    valid_losses.append(loss)
                    total_valid_loss += loss.item()
            history.append({"train_loss": total_loss, "valid_loss": total_valid_loss,
                            "last_valid": valid_losses[-1]})
        return history


def run():
    torch.manual_seed(0)
    batches = [(torch.randn(2, 6, 5), torch.randint(0, 7, (2, 4)), torch.tensor([6, 6])) for _ in range(2)]
    model = Transformer()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    return Trainer().train(model, batches, [batches], opt, 0, 1)


def bug_shows():
    history = run()
    # A validation loss should be computed without a graph; here it carries one.
    return history[-1]["last_valid"].grad_fn is not None
