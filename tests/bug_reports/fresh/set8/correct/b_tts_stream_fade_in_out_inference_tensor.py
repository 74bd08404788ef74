"""Streaming TTS: the inference-mode mel of a chunk cross-faded in place outside inference mode.
Source: https://github.com/FunAudioLLM/CosyVoice/issues/343 (clone before the write on CPU)."""
import torch
import torch.nn as nn

torch.manual_seed(0)
MELS, TOKENS_PER_CHUNK, FRAMES_PER_TOKEN, OVERLAP = 8, 4, 2, 4


def fade_in_out(fade_in_mel, fade_out_mel, window):
    device = fade_in_mel.device
    fade_in_mel, fade_out_mel = fade_in_mel.cpu(), fade_out_mel.cpu()
    mel_overlap_len = int(window.shape[0] / 2)
    if fade_in_mel.device == torch.device('cpu'):
        fade_in_mel = fade_in_mel.clone()
    fade_in_mel[..., :mel_overlap_len] = fade_in_mel[..., :mel_overlap_len] * window[:mel_overlap_len] + \
        fade_out_mel[..., -mel_overlap_len:] * window[mel_overlap_len:]
    return fade_in_mel.to(device)


class Flow(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(50, 16)
        self.decoder = nn.Linear(16, MELS * FRAMES_PER_TOKEN)

    def inference(self, token):
        frames = self.decoder(self.embedding(token)).reshape(1, -1, MELS)
        return frames.transpose(1, 2)


class TTSModel:
    def __init__(self):
        self.flow = Flow().eval()
        self.mel_window = torch.hann_window(2 * OVERLAP)
        self.mel_overlap = None

    @torch.inference_mode()
    def token2mel(self, token):
        return self.flow.inference(token)

    def token2wav(self, token, finalize=False):
        tts_mel = self.token2mel(token)
        if self.mel_overlap is not None:
            tts_mel = fade_in_out(tts_mel, self.mel_overlap, self.mel_window)
        if not finalize:
            self.mel_overlap = tts_mel[:, :, -OVERLAP:]
            tts_mel = tts_mel[:, :, :-OVERLAP]
        return tts_mel

    def inference(self, speech_tokens):
        chunks = speech_tokens.split(TOKENS_PER_CHUNK)
        for index, chunk in enumerate(chunks):
            yield self.token2wav(chunk.unsqueeze(0), finalize=index == len(chunks) - 1)


model = TTSModel()
speech_tokens = torch.randint(0, 50, (3 * TOKENS_PER_CHUNK,))
stream = [mel.clone() for mel in model.inference(speech_tokens)]
result = {"mel": torch.cat(stream, dim=2)}
