"""Coach, a coarse-to-fine cross-domain slot filler, trains in two stages
per batch: the binary tagger's CRF loss is backpropagated with
`retain_graph=True` and the optimizer steps, then the slot-name predictor
is trained on the tagger's `lstm_hiddens` from before that step, with one
`loss_slotname.backward(retain_graph=True); self.optimizer.step()` per
sample.  The slot-name loss reaches the tagger's LSTM through
`lstm_hiddens`, whose weights the first step (and each later per-sample
step) changed in place ("one of the variables needed for gradient
computation has been modified by an inplace operation").  The fix sums the
losses and steps once, or detaches `lstm_hiddens` for the second stage.
Buggy line: `self.optimizer.step()` after `loss_bin.backward(retain_graph=True)`
in `SLUTrainer.train_step`.
Expected finding: ADL003 there, and at the per-sample `self.optimizer.step()`,
which changes the slot-name predictor's weights that the next sample's loss,
computed before the loop, saved.
Source: https://github.com/zliucr/coach/issues/5"""
import torch
import torch.nn as nn


class BinarySLUTagger(nn.Module):
    def __init__(self, vocab=20, emb=8, hidden=8, num_binslot=3):
        super().__init__()
        self.embedding = nn.Embedding(vocab, emb)
        self.lstm = nn.LSTM(emb, hidden, batch_first=True)
        self.linear = nn.Linear(hidden, num_binslot)

    def forward(self, X):
        lstm_hiddens, _ = self.lstm(self.embedding(X))
        return self.linear(lstm_hiddens), lstm_hiddens

    def crf_loss(self, bin_preds, lengths, y_bin):
        return nn.functional.cross_entropy(bin_preds.reshape(-1, bin_preds.shape[-1]), y_bin.reshape(-1))


class SlotNamePredictor(nn.Module):
    def __init__(self, hidden=8, num_slot=4):
        super().__init__()
        self.proj = nn.Linear(hidden, num_slot)

    def forward(self, y_dm, lstm_hiddens, binary_golds, final_golds):
        pred_slotname_list, gold_slotname_list = [], []
        for i in range(lstm_hiddens.shape[0]):
            spans = binary_golds[i] == 1
            pred_slotname_list.append(self.proj(lstm_hiddens[i][spans]))
            gold_slotname_list.append(final_golds[i][spans])
        return pred_slotname_list, gold_slotname_list


class SLUTrainer(object):
    def __init__(self, binary_slu_tagger, slotname_predictor, lr=1e-3):
        self.binary_slu_tagger = binary_slu_tagger
        self.slotname_predictor = slotname_predictor
        model_parameters = [
            {"params": self.binary_slu_tagger.parameters()},
            {"params": self.slotname_predictor.parameters()},
        ]
        self.optimizer = torch.optim.Adam(model_parameters, lr=lr)
        self.loss_fn = nn.CrossEntropyLoss()

    def train_step(self, X, lengths, y_bin, y_final, y_dm):
        self.binary_slu_tagger.train()
        self.slotname_predictor.train()
        bin_preds, lstm_hiddens = self.binary_slu_tagger(X)

        loss_bin = self.binary_slu_tagger.crf_loss(bin_preds, lengths, y_bin)
        self.optimizer.zero_grad()
        loss_bin.backward(retain_graph=True)
        self.optimizer.step()  # expect: ADL003

        pred_slotname_list, gold_slotname_list = self.slotname_predictor(y_dm, lstm_hiddens, binary_golds=y_bin, final_golds=y_final)
        for pred_slotname_each_sample, gold_slotname_each_sample in zip(pred_slotname_list, gold_slotname_list):
            loss_slotname = self.loss_fn(pred_slotname_each_sample, gold_slotname_each_sample)
            self.optimizer.zero_grad()
            loss_slotname.backward(retain_graph=True)
            self.optimizer.step()  # expect: ADL003
        return loss_bin.item(), loss_slotname.item()


def run():
    torch.manual_seed(0)
    trainer = SLUTrainer(BinarySLUTagger(), SlotNamePredictor())
    X = torch.randint(0, 20, (2, 5))
    y_bin = torch.tensor([[0, 1, 2, 0, 1], [1, 0, 0, 1, 2]])
    y_final = torch.randint(0, 4, (2, 5))
    trainer.train_step(X, torch.tensor([5, 5]), y_bin, y_final, torch.tensor([0, 1]))
