"""Dual-decoder knowledge distillation for translation (pytorch/translate's `dual_decoder`
model and its criterion): one encoder feeds a large teacher decoder and a small student decoder,
both trained together. The teacher learns from the references only; the student's loss mixes its
own NLL with a distillation term, the cross entropy between the teacher decoder's output
probabilities and the student's log-probabilities. The teacher's probabilities were used as
targets as they came out of the teacher decoder, so the distillation term also sends gradient
into the teacher decoder (and through it into the shared encoder), pulling the teacher's output
toward the student's. No error. The fix (PR #391, "We need to call `detach()` on the teacher
decoder's output probabilities, which are used as targets for the student decoder (KD loss term)
to prevent back-propagation of gradient from that loss term into the teacher decoder") detaches
them.
Source: https://github.com/pytorch/translate/pull/391
expect: silent"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB, EMBED, HIDDEN = 24, 8, 16
KD_WEIGHT = 0.5


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, EMBED)
        self.rnn = nn.GRU(EMBED, HIDDEN, batch_first=True)

    def forward(self, src_tokens):
        outputs, final_hidden = self.rnn(self.embed_tokens(src_tokens))
        return outputs, final_hidden


class RNNDecoder(nn.Module):
    def __init__(self, out_embed_dim):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, EMBED)
        self.rnn = nn.GRU(EMBED, HIDDEN, batch_first=True)
        self.bottleneck = nn.Linear(HIDDEN, out_embed_dim)
        self.output_projection = nn.Linear(out_embed_dim, VOCAB)

    def forward(self, prev_output_tokens, encoder_hidden):
        x, _ = self.rnn(self.embed_tokens(prev_output_tokens), encoder_hidden)
        return self.output_projection(torch.tanh(self.bottleneck(x)))


class DualDecoderModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()
        self.teacher_decoder = RNNDecoder(out_embed_dim=32)
        self.student_decoder = RNNDecoder(out_embed_dim=8)

    def forward(self, src_tokens, prev_output_tokens):
        _, encoder_hidden = self.encoder(src_tokens)
        teacher_logits = self.teacher_decoder(prev_output_tokens, encoder_hidden)
        student_logits = self.student_decoder(prev_output_tokens, encoder_hidden)
        return teacher_logits, student_logits


class DualDecoderKDCriterion:
    def __init__(self, kd_weight):
        self.kd_weight = kd_weight

    def __call__(self, teacher_logits, student_logits, target):
        teacher_nll = F.cross_entropy(teacher_logits.reshape(-1, VOCAB), target.reshape(-1))
        student_nll = F.cross_entropy(student_logits.reshape(-1, VOCAB), target.reshape(-1))
        teacher_probs = F.softmax(teacher_logits, dim=-1).detach()
        student_lprobs = F.log_softmax(student_logits, dim=-1)
        kd_loss = -(teacher_probs * student_lprobs).sum(dim=-1).mean()
        student_loss = (1.0 - self.kd_weight) * student_nll + self.kd_weight * kd_loss
        return teacher_nll + student_loss, teacher_nll, student_loss


def make_batch(batch_size=6, src_len=7, tgt_len=6):
    src = torch.randint(1, VOCAB, (batch_size, src_len))
    target = (src[:, :tgt_len] * 3 + 1) % VOCAB
    prev_output_tokens = torch.cat([torch.zeros(batch_size, 1, dtype=torch.long), target[:, :-1]], dim=1)
    return src, prev_output_tokens, target


model = DualDecoderModel()
criterion = DualDecoderKDCriterion(KD_WEIGHT)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
batches = [make_batch() for _ in range(4)]

teacher_losses, student_losses = [], []
for epoch in range(2):
    for src, prev_output_tokens, target in batches:
        teacher_logits, student_logits = model(src, prev_output_tokens)
        loss, teacher_nll, student_loss = criterion(teacher_logits, student_logits, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        teacher_losses.append(teacher_nll.item())
        student_losses.append(student_loss.item())

result = {
    "teacher_losses": torch.tensor(teacher_losses),
    "student_losses": torch.tensor(student_losses),
    "parameters": [p.detach().clone() for p in model.parameters()],
}
