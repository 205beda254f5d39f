"""Recurrent and speech workloads of the coverage benchmark (models written here, not from transformers).

- every fp32 variant of `benchmarks/rnn_cpu.py` (`nn.RNN` / `nn.GRU` / `nn.LSTM`: sequence-first or
  batch_first, with or without an initial state, bidirectional, multi-layer with dropout, `proj_size`,
  packed sequences), at that benchmark's shape;
- a DeepSpeech2-style CTC speech model: a 2-d convolution front end over log-mel frames (BatchNorm,
  Hardtanh), a 2-layer bidirectional GRU over packed utterances of different lengths, a linear
  classifier and `F.ctc_loss` with per-utterance input and target lengths;
- an LSTM sequence tagger over token ids (embedding, 2-layer bidirectional LSTM with dropout, a
  per-token cross-entropy), the shape of a classic NER / POS model.
Each is a `memplan.workload.Workload`, analysed and measured exactly like the transformers models.
"""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

import rnn_cpu
from memplan.workload import Workload

MELS, FRAMES, HID, CHARS = 40, 120, 64, 29
TOKENS, VOCAB, EMB, TAGS = 48, 1000, 64, 17


class SpeechCTC(nn.Module):
    """DeepSpeech2-style acoustic model (Amodei et al. 2016): conv front end, bidirectional GRUs, CTC."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(1, 16, (11, 11), stride=(2, 2), padding=(5, 5)), nn.BatchNorm2d(16), nn.Hardtanh(0, 20),
            nn.Conv2d(16, 16, (11, 11), stride=(2, 1), padding=(5, 5)), nn.BatchNorm2d(16), nn.Hardtanh(0, 20))
        self.gru = nn.GRU(16 * (MELS // 4), HID, num_layers=2, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(2 * HID, CHARS)

    def forward(self, feats, lengths, targets, target_lengths):
        x = self.conv(feats.unsqueeze(1))                       # (B, 16, mels / 4, frames / 2)
        b, c, f, t = x.shape
        x = x.permute(0, 3, 1, 2).reshape(b, t, c * f)
        out_lengths = (lengths + 1) // 2
        packed = nn.utils.rnn.pack_padded_sequence(x, out_lengths, batch_first=True, enforce_sorted=False)
        y, _ = nn.utils.rnn.pad_packed_sequence(self.gru(packed)[0], batch_first=True, total_length=t)
        logp = self.fc(y).log_softmax(-1).transpose(0, 1)       # (T, B, chars)
        return F.ctc_loss(logp, targets, out_lengths, target_lengths)


class LSTMTagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, EMB)
        self.lstm = nn.LSTM(EMB, HID, num_layers=2, batch_first=True, bidirectional=True, dropout=0.3)
        self.out = nn.Linear(2 * HID, TAGS)

    def forward(self, ids, tags):
        return F.cross_entropy(self.out(self.lstm(self.emb(ids))[0]).flatten(0, 1), tags.flatten())


def _speech_batch(batch_size: int):
    lengths = torch.tensor([FRAMES - 13 * i for i in range(batch_size)]).clamp(min=FRAMES // 2)
    target_lengths = (lengths // 8).clamp(min=1)
    targets = torch.randint(1, CHARS, (batch_size, int(target_lengths.max())))
    return torch.randn(batch_size, MELS, FRAMES), lengths, targets, target_lengths


def _loss_is_output(out, batch):
    return out


def names() -> list[str]:
    """Workload names: the fp32 recurrent variants, then the two models."""
    return [rnn_cpu.label(v) for v in rnn_cpu.variants() if v.get("precision", "fp32") == "fp32"] + [
        "SpeechCTC (DeepSpeech2-style)", "LSTMTagger"]


def workload(name: str) -> tuple[Workload, int]:
    """The named workload and its parameter count."""
    if name.startswith("SpeechCTC"):
        wl = Workload(name=name, build_model=SpeechCTC, make_batch=_speech_batch, loss_fn=_loss_is_output)
    elif name == "LSTMTagger":
        wl = Workload(name=name, build_model=LSTMTagger, loss_fn=_loss_is_output,
                      make_batch=lambda b: (torch.randint(0, VOCAB, (b, TOKENS)), torch.randint(0, TAGS, (b, TOKENS))))
    else:
        (v,) = [v for v in rnn_cpu.variants() if rnn_cpu.label(v) == name]
        wl = rnn_cpu.workload(v)
    with torch.device("meta"):
        n_params = sum(p.numel() for p in wl.build_model().parameters())
    return wl, n_params
