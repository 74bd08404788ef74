"""Soft-Masked BERT: the embedding of the [MASK] token is computed once, in
`__init__`, with the BERT embedding layer (`self.mask_e =
self.embedding(mask_token_id)`), and every forward mixes it into the input
embeddings.  The tensor keeps the graph of that first call: the training
loop's second `loss.backward(retain_graph=True)` goes back through it after
the optimizer has updated the embedding layer's weights ("[torch.FloatTensor
[768]] is at version 3; expected version 2").  The reported fix detaches it.
Source: https://github.com/hiyoung123/SoftMaskedBert/issues/16"""
import torch
import torch.nn as nn


class BertEmbeddings(nn.Module):
    def __init__(self, vocab_size, hidden_size, max_position=32):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab_size, hidden_size)
        self.position_embeddings = nn.Embedding(max_position, hidden_size)
        self.LayerNorm = nn.LayerNorm(hidden_size)
        self.dropout = nn.Dropout(0.1)

    def forward(self, input_ids):
        positions = torch.arange(input_ids.size(1)).unsqueeze(0)
        embeddings = self.word_embeddings(input_ids) + self.position_embeddings(positions)
        return self.dropout(self.LayerNorm(embeddings))


class BiGRU(nn.Module):
    def __init__(self, embedding_size, hidden, n_layers):
        super().__init__()
        self.rnn = nn.GRU(embedding_size, hidden, num_layers=n_layers, bidirectional=True, batch_first=True)
        self.linear = nn.Linear(hidden * 2, 1)
        self.sigmoid = nn.Sigmoid()

    def forward(self, x):
        out, _ = self.rnn(x)
        return self.sigmoid(self.linear(out))


class SoftMaskedBert(nn.Module):
    def __init__(self, vocab_size=50, hidden_size=16, hidden=8, layer_n=1, mask_token_id=3):
        super().__init__()
        self.embedding = BertEmbeddings(vocab_size, hidden_size)
        self.detector = BiGRU(hidden_size, hidden, layer_n)
        layer = nn.TransformerEncoderLayer(hidden_size, nhead=2, dim_feedforward=32, batch_first=True)
        self.corrector = nn.TransformerEncoder(layer, num_layers=1)
        mask_token_id = torch.tensor([[mask_token_id]])
        self.mask_e = self.embedding(mask_token_id)  # missed: ADL017
        self.linear = nn.Linear(hidden_size, vocab_size)
        self.softmax = nn.LogSoftmax(dim=-1)

    def forward(self, input_ids):
        e = self.embedding(input_ids)
        p = self.detector(e)
        e_ = p * self.mask_e + (1 - p) * e
        h = self.corrector(e_)
        h = h + e
        out = self.softmax(self.linear(h))
        return out, p


def train(model, batches, gama=0.8):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion_c = nn.NLLLoss()
    criterion_d = nn.BCELoss()
    for input_ids, label, detect_label in batches:
        out, prob = model(input_ids)
        loss_d = criterion_d(prob.squeeze(-1), detect_label)
        loss_c = criterion_c(out.transpose(1, 2), label)
        loss = gama * loss_c + (1 - gama) * loss_d
        optimizer.zero_grad()
        loss.backward(retain_graph=True)
        optimizer.step()


def run():
    torch.manual_seed(0)
    model = SoftMaskedBert()
    batches = [(torch.randint(0, 50, (2, 6)), torch.randint(0, 50, (2, 6)), torch.randint(0, 2, (2, 6)).float())
               for _ in range(2)]
    train(model, batches)
