"""Extractive question answering with learned word-embedding perturbations (seanie12/SWEP,
models.py): the BERT QA model is run twice per batch, once on the perturbed embeddings
`inputs_embeds * noise` and once on the clean ones, with the same `start_positions` /
`end_positions` tensors, and the two losses are added. The QA head clamps the answer positions in
place (`start_positions.clamp_(0, ignored_index)`, as BertForQuestionAnswering did), so the second
pass bumps the version of the target the first pass's cross entropy saved: "one of the variables
needed for gradient computation has been modified by an inplace operation: [torch.LongTensor [8]]
is at version 3; expected version 2".
Source: https://github.com/seanie12/SWEP/issues/3 (the reporter's workaround runs both views in
one pass; giving each pass its own copy of the positions keeps the two-loss objective).
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, HIDDEN, SEQ, BATCH = 20, 16, 7, 4


class QAModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.TransformerEncoder(
            nn.TransformerEncoderLayer(HIDDEN, nhead=2, dim_feedforward=32, dropout=0.0, batch_first=True),
            num_layers=1)
        self.qa_outputs = nn.Linear(HIDDEN, 2)

    def forward(self, inputs_embeds, start_positions, end_positions):
        start_logits, end_logits = self.qa_outputs(self.encoder(inputs_embeds)).unbind(dim=-1)
        ignored_index = start_logits.size(1)
        start_positions.clamp_(0, ignored_index)
        end_positions.clamp_(0, ignored_index)
        start_loss = F.cross_entropy(start_logits, start_positions, ignore_index=ignored_index)
        end_loss = F.cross_entropy(end_logits, end_positions, ignore_index=ignored_index)
        return (start_loss + end_loss) / 2


embeddings = nn.Embedding(VOCAB, HIDDEN)
model = QAModel()
noise_net = nn.Sequential(nn.Linear(HIDDEN, HIDDEN), nn.Sigmoid())  # learned multiplicative noise
params = list(embeddings.parameters()) + list(model.parameters()) + list(noise_net.parameters())
optimizer = torch.optim.Adam(params, lr=1e-3)

input_ids = torch.randint(0, VOCAB, (BATCH, SEQ))
start_positions = torch.tensor([1, 2, 9, 0])  # 9: an answer truncated out of the window
end_positions = torch.tensor([3, 2, 9, 4])

losses = []
for step in range(3):
    optimizer.zero_grad()
    inputs_embeds = embeddings(input_ids)
    noise = 2 * noise_net(inputs_embeds)
    noise_loss = model(inputs_embeds * noise, start_positions, end_positions)
    clean_loss = model(inputs_embeds, start_positions, end_positions)
    loss = noise_loss + clean_loss
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": torch.stack(losses), "params": [p.detach().clone() for p in params]}
