"""Explaining an AWD-LSTM text classifier with "intrinsic attention" (muellerzr/fastinference,
`inference/text.py`, `_intrinsic_attention`): the token embeddings are detached and made a leaf
that requires grad, the rest of the model is run on them, and the chosen class's probability is
backpropagated. The attention per token should be the size of the *gradient* on each embedding,
but the code reads `emb.squeeze().abs().sum(dim=-1)`: the embeddings themselves. The backward
runs for nothing and every class id gives the same picture. No error. The merged fix reads
`emb.grad` (and calls `emb.retain_grad()` before the backward).
Source: https://github.com/muellerzr/fastinference/pull/44 (fixes issue #31)
expect: silent"""
import torch
import torch.nn as nn

torch.manual_seed(0)

VOCAB, EMB, HID, CLASSES = 20, 8, 12, 3


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Embedding(VOCAB, EMB)
        self.rnn = nn.LSTM(EMB, HID, batch_first=True)

    def forward(self, emb):
        out, _ = self.rnn(emb)
        return out


encoder = Encoder()
classifier = nn.Linear(HID, CLASSES)
encoder.eval()
classifier.eval()


def intrinsic_attention(batch, class_id=None):
    encoder.zero_grad()
    classifier.zero_grad()
    emb = encoder.encoder(batch).detach().requires_grad_(True)
    lstm = encoder(emb)
    cl = classifier(lstm[:, -1]).softmax(dim=-1)
    if class_id is None:
        class_id = cl.argmax()
    cl[0][class_id].backward()
    attn = emb.squeeze().abs().sum(dim=-1)
    attn /= attn.max()
    return attn.detach()


batch = torch.randint(0, VOCAB, (1, 7))
result = {f"class_{c}": intrinsic_attention(batch, c) for c in range(CLASSES)}
