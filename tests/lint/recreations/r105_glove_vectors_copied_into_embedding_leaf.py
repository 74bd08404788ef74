"""Tree-LSTM sentence similarity (SICK): after building the model, `main()`
plugs the GloVe vectors into the embedding matrix with
`model.emb.weight.copy_(emb)`.  Unless `--freeze_embed` is given, the
embedding weight is a leaf that requires grad, and the copy raises "a leaf
Variable that requires grad has been used in an in-place operation" (it
worked before PyTorch 0.4, when the line went through `.data`).
Source: https://github.com/dasguptar/treelstm.pytorch/pull/26"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

PAD = 0


class SentenceEncoder(nn.Module):
    def __init__(self, in_dim, mem_dim):
        super().__init__()
        self.rnn = nn.LSTM(in_dim, mem_dim, batch_first=True)

    def forward(self, inputs):
        _, (h, c) = self.rnn(inputs.unsqueeze(0))
        return c[-1], h[-1]


class Similarity(nn.Module):
    def __init__(self, mem_dim, hidden_dim, num_classes):
        super().__init__()
        self.wh = nn.Linear(2 * mem_dim, hidden_dim)
        self.wp = nn.Linear(hidden_dim, num_classes)

    def forward(self, lvec, rvec):
        mult_dist = torch.mul(lvec, rvec)
        abs_dist = torch.abs(torch.add(lvec, -rvec))
        vec_dist = torch.cat((mult_dist, abs_dist), 1)
        out = torch.sigmoid(self.wh(vec_dist))
        return F.log_softmax(self.wp(out), dim=1)


class SimilarityTreeLSTM(nn.Module):
    def __init__(self, vocab_size, in_dim, mem_dim, hidden_dim, num_classes, sparsity, freeze):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, in_dim, padding_idx=PAD, sparse=sparsity)
        if freeze:
            self.emb.weight.requires_grad = False
        self.encoder = SentenceEncoder(in_dim, mem_dim)
        self.similarity = Similarity(mem_dim, hidden_dim, num_classes)

    def forward(self, linputs, rinputs):
        lstate, _ = self.encoder(self.emb(linputs))
        rstate, _ = self.encoder(self.emb(rinputs))
        return self.similarity(lstate, rstate)


def parse_args(argv):
    parser = argparse.ArgumentParser(description='Tree-LSTM for sentence similarity')
    parser.add_argument('--input_dim', default=8, type=int)
    parser.add_argument('--mem_dim', default=6, type=int)
    parser.add_argument('--hidden_dim', default=5, type=int)
    parser.add_argument('--num_classes', default=5, type=int)
    parser.add_argument('--sparse', action='store_true')
    parser.add_argument('--freeze_embed', action='store_true')
    parser.add_argument('--lr', default=0.01, type=float)
    return parser.parse_args(argv)


def main(argv=()):
    args = parse_args(list(argv))
    vocab_size = 12
    model = SimilarityTreeLSTM(vocab_size, args.input_dim, args.mem_dim, args.hidden_dim,
                               args.num_classes, args.sparse, args.freeze_embed)
    criterion = nn.KLDivLoss(reduction='batchmean')

    emb = torch.zeros(vocab_size, args.input_dim, dtype=torch.float)
    emb.normal_(0, 0.05)
    emb[PAD].zero_()
    # plug these into embedding matrix inside model
    model.emb.weight.copy_(emb)  # missed: ADL014

    optimizer = optim.Adagrad(filter(lambda p: p.requires_grad, model.parameters()), lr=args.lr)
    target = torch.full((1, args.num_classes), 1.0 / args.num_classes)
    output = model(torch.tensor([1, 2, 3]), torch.tensor([4, 5]))
    loss = criterion(output, target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


def run():
    torch.manual_seed(0)
    main()
