"""A fairseq-style attentional encoder-decoder whose decoder changes the encoder's output while it
decodes: after each target step it rescales one channel of the encoder states in place,
`encoder_out[0][:, :, j] = do_something(encoder_out[0][:, :, j])`, so that the next step attends to
the updated states. The attention of the earlier steps saved those states for backward, and
`loss.backward()` raises "one of the variables needed for gradient computation has been modified by
an inplace operation".
Source: https://github.com/facebookresearch/fairseq/issues/251 ("Problem About Changing the
encoder_out": "The operation I done is like this: encoder_out[0][:,:,j] = do_something
(encoder_out[0][:,:,j])"; answer: "You can't modify it in place like this ... You should copy the
variable and modify it. encoder_out does participate in gradient calculation").
expect: raises"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, DIM, SRC_LEN, TGT_LEN, BATCH = 20, 8, 6, 4, 3


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.proj = nn.Linear(DIM, DIM)

    def forward(self, src_tokens):
        x = torch.tanh(self.proj(self.embed(src_tokens)))  # B x T x C
        return (x.transpose(0, 1) * 1.0,)  # T x B x C, like fairseq's encoder_out


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, DIM)
        self.cell = nn.GRUCell(2 * DIM, DIM)
        self.gate = nn.Linear(DIM, DIM)
        self.out = nn.Linear(2 * DIM, VOCAB)

    def forward(self, prev_output_tokens, encoder_out):
        hidden = torch.zeros(prev_output_tokens.shape[0], DIM)
        context = torch.zeros(prev_output_tokens.shape[0], DIM)
        logits = []
        for t in range(prev_output_tokens.shape[1]):
            x = torch.cat([self.embed(prev_output_tokens[:, t]), context], dim=1)
            hidden = self.cell(x, hidden)
            scores = torch.einsum("tbc,bc->tb", encoder_out[0], hidden)
            attn = F.softmax(scores, dim=0)
            context = torch.einsum("tb,tbc->bc", attn, encoder_out[0])
            logits.append(self.out(torch.cat([hidden, context], dim=1)))
            # Decay the channel the decoder just used most, for the next step.
            j = t % DIM
            states = encoder_out[0].clone()
            states[:, :, j] = encoder_out[0][:, :, j] * torch.sigmoid(self.gate(hidden)[:, j])
            encoder_out = (states,)
        return torch.stack(logits, dim=1)


encoder, decoder = Encoder(), Decoder()
optimizer = torch.optim.Adam(list(encoder.parameters()) + list(decoder.parameters()), lr=1e-2)

src_tokens = torch.randint(0, VOCAB, (BATCH, SRC_LEN))
tgt_tokens = torch.randint(0, VOCAB, (BATCH, TGT_LEN))
prev_output_tokens = torch.cat([torch.zeros(BATCH, 1, dtype=torch.long), tgt_tokens[:, :-1]], dim=1)

losses = []
for step in range(3):
    encoder_out = encoder(src_tokens)
    logits = decoder(prev_output_tokens, encoder_out)
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), tgt_tokens.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())

result = {"losses": losses, "encoder": [p.detach().clone() for p in encoder.parameters()],
          "decoder": [p.detach().clone() for p in decoder.parameters()]}
