"""SpeechBrain CRDNN recipe: the encoder ran on `feats.detach()`, so the CTC loss had no gradient with respect to the waveforms.
Source: https://github.com/speechbrain/speechbrain/issues/1396 (removing `.detach()` gives the gradient)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Fbank(nn.Module):
    def __init__(self, n_fft=128, hop=64, n_mels=20):
        super().__init__()
        self.n_fft = n_fft
        self.hop = hop
        self.register_buffer("window", torch.hann_window(n_fft))
        self.register_buffer("filters", torch.rand(n_fft // 2 + 1, n_mels))

    def forward(self, wavs):
        spec = torch.stft(wavs, self.n_fft, self.hop, window=self.window, return_complex=True)
        power = spec.real.pow(2) + spec.imag.pow(2)
        return torch.log1p(power.transpose(1, 2) @ self.filters)


class InputNormalization(nn.Module):
    def forward(self, feats, wav_lens):
        mean = feats.mean(dim=1, keepdim=True)
        std = feats.std(dim=1, keepdim=True)
        return (feats - mean) / (std + 1e-5)


class CRDNN(nn.Module):
    def __init__(self, n_mels=20, hidden=32):
        super().__init__()
        self.cnn = nn.Conv1d(n_mels, hidden, kernel_size=3, padding=1)
        self.rnn = nn.GRU(hidden, hidden, batch_first=True, bidirectional=True)
        self.dnn = nn.Linear(2 * hidden, hidden)

    def forward(self, feats):
        x = torch.relu(self.cnn(feats.transpose(1, 2))).transpose(1, 2)
        x, _ = self.rnn(x)
        return torch.relu(self.dnn(x))


class ASR:
    def __init__(self, n_tokens=10):
        self.compute_features = Fbank()
        self.modules = nn.ModuleDict(
            {"normalize": InputNormalization(), "enc": CRDNN(), "ctc_lin": nn.Linear(32, n_tokens)}
        )

    def compute_forward(self, wavs, wav_lens):
        feats = self.compute_features(wavs)
        feats = self.modules.normalize(feats, wav_lens)
        x = self.modules.enc(feats)
        logits = self.modules.ctc_lin(x)
        return F.log_softmax(logits, dim=-1)

    def compute_objectives(self, p_ctc, tokens, token_lens):
        input_lens = torch.full((p_ctc.shape[0],), p_ctc.shape[1], dtype=torch.long)
        return F.ctc_loss(p_ctc.transpose(0, 1), tokens, input_lens, token_lens, blank=0)


asr = ASR()
wavs = torch.randn(3, 2048) * 0.1
wav_lens = torch.ones(3)
tokens = torch.randint(1, 10, (3, 5))
token_lens = torch.full((3,), 5, dtype=torch.long)

scores = []
for utterance in range(3):
    wav = wavs[utterance:utterance + 1].clone().requires_grad_(True)
    p_ctc = asr.compute_forward(wav, wav_lens[utterance:utterance + 1])
    loss = asr.compute_objectives(p_ctc, tokens[utterance:utterance + 1], token_lens[utterance:utterance + 1])
    grad = torch.autograd.grad(loss, wav, retain_graph=True)[0]
    scores.append(grad.norm())
result = {"scores": scores}
