"""R-Drop fine-tuning of a summarization model (dropreg/R-Drop, the fairseq `summeration_rdrop`
example): the R-Drop criterion runs the batch twice under dropout, adds the KL consistency term to
the two cross-entropies, and already calls backward() on the total; the task's train_step, written
for an ordinary criterion, called backward() on the returned loss a second time. The second call
runs into the graph the first one freed.
Source: https://github.com/dropreg/R-Drop/issues/8 ("Trying to backward through the graph a second
time" unless the task's own backward lines are removed; the maintainers fixed the example so the
loss is backpropagated once).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, DIM, SRC, TGT, BATCH, ALPHA = 20, 16, 7, 4, 3, 0.5


class TinySummarizer(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.encoder = nn.Linear(DIM, DIM)
        self.dropout = nn.Dropout(0.2)
        self.decoder = nn.Linear(2 * DIM, DIM)
        self.out = nn.Linear(DIM, VOCAB)

    def forward(self, source, target_in):
        memory = torch.tanh(self.encoder(self.embed(source))).mean(dim=1, keepdim=True)
        queries = self.dropout(self.embed(target_in))
        hidden = torch.tanh(self.decoder(torch.cat([queries, memory.expand_as(queries)], dim=-1)))
        return self.out(self.dropout(hidden))


def rdrop_criterion(model, source, target_in, target_out):
    """Two passes under dropout, cross-entropy on both and the symmetric KL between them."""
    logits_a = model(source, target_in)
    logits_b = model(source, target_in)
    nll = F.cross_entropy(logits_a.reshape(-1, VOCAB), target_out.reshape(-1)) + \
        F.cross_entropy(logits_b.reshape(-1, VOCAB), target_out.reshape(-1))
    log_a, log_b = F.log_softmax(logits_a, -1), F.log_softmax(logits_b, -1)
    kl = F.kl_div(log_a, log_b, log_target=True, reduction="batchmean") + \
        F.kl_div(log_b, log_a, log_target=True, reduction="batchmean")
    loss = nll + ALPHA * kl / 2
    loss.backward()
    return loss


def train_step(model, optimizer, batch):
    optimizer.zero_grad()
    loss = rdrop_criterion(model, *batch)
    optimizer.step()
    return loss.detach()


model = TinySummarizer()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
source = torch.randint(0, VOCAB, (BATCH, SRC))
summary = torch.randint(0, VOCAB, (BATCH, TGT + 1))
batch = (source, summary[:, :-1], summary[:, 1:])

losses = []
for step in range(3):
    torch.manual_seed(100 + step)
    losses.append(train_step(model, optimizer, batch))

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in model.parameters()]}
