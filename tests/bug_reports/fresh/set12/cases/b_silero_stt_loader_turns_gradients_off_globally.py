"""silero-models, using the pretrained speech-to-text model as a frozen layer inside one's own
model: `utils.init_jit_model` starts with `torch.set_grad_enabled(False)`, which switches autograd
off for the whole process, not only for the model it loads. The user's head trained on the STT
outputs then produces a loss without a graph and `loss.backward()` raises "element 0 of tensors
does not require grad and does not have a grad_fn"; the reporter had to turn gradients back on by
hand, and the maintainer explains the loader was written for inference only.
Source: https://github.com/snakers4/silero-models/issues/40
expect: raises"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class TinySTT(nn.Module):
    """Stands in for the downloaded TorchScript model: waveform frames to per-frame label logits."""

    def __init__(self, frame=160, n_labels=12):
        super().__init__()
        self.frame = frame
        self.encoder = nn.Sequential(nn.Linear(frame, 64), nn.ReLU(), nn.Linear(64, n_labels))

    def forward(self, wav):
        frames = wav.unfold(-1, self.frame, self.frame)
        return self.encoder(frames).log_softmax(-1)


def init_jit_model(build_model, device=torch.device("cpu")):
    torch.set_grad_enabled(False)
    model = torch.jit.script(build_model()).to(device)
    model.eval()
    return model


class CommandClassifier(nn.Module):
    """The user's own model: a trainable head on top of the frozen STT model's outputs."""

    def __init__(self, stt, n_labels=12, n_commands=4):
        super().__init__()
        self.stt = stt
        self.head = nn.GRU(n_labels, 32, batch_first=True)
        self.out = nn.Linear(32, n_commands)

    def forward(self, wav):
        label_probs = self.stt(wav)
        _, hidden = self.head(label_probs)
        return self.out(hidden[-1])


stt_model = init_jit_model(TinySTT)
for p in stt_model.parameters():
    p.requires_grad_(False)
classifier = CommandClassifier(stt_model)
optimizer = torch.optim.Adam(list(classifier.head.parameters()) + list(classifier.out.parameters()), lr=1e-3)
wavs = torch.randn(6, 1600) * 0.1
commands = torch.randint(0, 4, (6,))
losses = []
for step in range(4):
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(classifier(wavs), commands)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
result = {"losses": losses, "params": [p.detach().clone() for p in classifier.out.parameters()]}
