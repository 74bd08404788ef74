"""A log-mel-like front end for keyword spotting: frames the waveform, windows it and takes the log
power of a fixed filter bank. It has no trainable weights, so it runs without autograd."""
import torch


class LogFilterbank:
    def __init__(self, frame=16, hop=8, bands=5):
        torch.manual_seed(1)
        self.frame, self.hop = frame, hop
        self.window = torch.hann_window(frame)
        self.filters = torch.rand(frame, bands)

    @torch.inference_mode()
    def __call__(self, waveforms):
        frames = waveforms.unfold(-1, self.frame, self.hop) * self.window
        return torch.log1p((frames ** 2) @ self.filters).transpose(1, 2)
