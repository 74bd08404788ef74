"""NeMo's `FFTransformerDecoder._forward` added the positional embedding to
its input in place, `inp += pos_emb`, altering the caller's tensor.  When the
caller's tensor was also read by a layer that saved it for the backward (a
duration/pitch predictor on the same encoder output), backward fails
("modified by an inplace operation"); otherwise the caller silently sees the
changed values.  The fix is `inp = inp + pos_emb`.
Buggy line: `inp += pos_emb` in `FFTransformerDecoder._forward` (the linter reports
the call that hands `enc_out` to the decoder, whose forward writes its argument).
Source: https://github.com/NVIDIA-NeMo/Speech/pull/7440"""
import torch
import torch.nn as nn


class PositionalEmbedding(nn.Module):
    def __init__(self, demb):
        super().__init__()
        inv_freq = 1 / (10000 ** (torch.arange(0.0, demb, 2.0) / demb))
        self.register_buffer("inv_freq", inv_freq)

    def forward(self, pos_seq):
        sinusoid = torch.ger(pos_seq, self.inv_freq)
        return torch.cat([sinusoid.sin(), sinusoid.cos()], dim=1)[None, :, :]


class FFTransformerDecoder(nn.Module):
    def __init__(self, d_model=8):
        super().__init__()
        self.pos_emb = PositionalEmbedding(d_model)
        self.layer = nn.Sequential(nn.Linear(d_model, d_model), nn.ReLU())

    def forward(self, input, seq_lens):
        mask = (torch.arange(input.size(1))[None, :] < seq_lens[:, None]).unsqueeze(2).to(input.dtype)
        return self._forward(input, mask)

    def _forward(self, inp, mask):
        pos_seq = torch.arange(inp.size(1), device=inp.device).to(inp.dtype)
        pos_emb = self.pos_emb(pos_seq) * mask
        inp += pos_emb
        out = self.layer(inp) * mask
        return out, mask


class TinyTTS(nn.Module):
    def __init__(self, vocab=10, d_model=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.encoder = nn.Linear(d_model, d_model)
        self.duration_predictor = nn.Linear(d_model, 1)
        self.decoder = FFTransformerDecoder(d_model)
        self.proj = nn.Linear(d_model, 4)

    def forward(self, text, lens):
        enc_out = torch.tanh(self.encoder(self.embed(text)))
        log_durs = self.duration_predictor(enc_out).squeeze(-1)
        dec_out, _ = self.decoder(enc_out, lens)  # expect: ADL001
        return self.proj(dec_out), log_durs


def run():
    torch.manual_seed(0)
    model = TinyTTS()
    text, lens = torch.randint(0, 10, (2, 5)), torch.tensor([5, 3])
    mel, log_durs = model(text, lens)
    loss = mel.pow(2).mean() + log_durs.pow(2).mean()
    loss.backward()
