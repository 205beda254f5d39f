"""The Hugging Face and Lightning callbacks run the pre-flight check at train start."""
from __future__ import annotations

import types

import pytest
import torch

from memplan.errors import MemoryPlanError
from memplan.validate.integrations import batch_fn_from_loader, hf_train_options

transformers = pytest.importorskip("transformers")


def _bert():
    cfg = transformers.BertConfig(vocab_size=500, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                  intermediate_size=64, num_labels=3, max_position_embeddings=64)
    return transformers.BertForSequenceClassification(cfg)


def _collate(items):
    n = max(len(i["input_ids"]) for i in items)
    pad = lambda xs: xs + [0] * (n - len(xs))  # noqa: E731
    return {"input_ids": torch.tensor([pad(i["input_ids"]) for i in items]),
            "attention_mask": torch.tensor([pad([1] * len(i["input_ids"])) for i in items]),
            "labels": torch.tensor([i["labels"] for i in items])}


DATA = [{"input_ids": list(range(1, 10 + i)), "labels": i % 3} for i in range(12)]


def _loader(bs=4):
    return torch.utils.data.DataLoader(DATA, batch_size=bs, collate_fn=_collate)


def _args(**kw):
    base = dict(per_device_train_batch_size=4, gradient_accumulation_steps=2, bf16=False, fp16=False,
                max_grad_norm=1.0, device=torch.device("cpu"))
    base.update(kw)
    return types.SimpleNamespace(**base)


def test_batch_fn_from_loader_shapes():
    fn = batch_fn_from_loader(_loader(), seq_len=40)
    b = fn(3)
    assert b["input_ids"].shape == (3, 40) and b["labels"].shape == (3,)
    assert b["attention_mask"].dtype == torch.long and int(b["attention_mask"].min()) == 1


def test_hf_train_options():
    assert hf_train_options(_args(bf16=True)) == {"batch_size": 4, "grad_accum": 2, "precision": "bf16-amp",
                                                  "clip_grad_norm": 1.0}


def test_hf_callback_estimate_and_misfit():
    from memplan.validate.integrations import HFPreflightCallback

    model = _bert()
    opt = torch.optim.AdamW(model.parameters())
    state, control = transformers.TrainerState(), transformers.TrainerControl()
    cb = HFPreflightCallback(seq_len=32)
    assert isinstance(cb, transformers.TrainerCallback)
    cb.on_train_begin(_args(), state, control, model=model, optimizer=opt, train_dataloader=_loader())
    est = cb.estimate
    assert est.config["batch_size"] == 4 and est.config["grad_accum"] == 2 and est.config["clip_grad_norm"] == 1.0
    assert est.breakdown_at_peak["optimizer_state"] > 0

    small = HFPreflightCallback(capacity="256KiB", device="cpu")
    with pytest.raises(MemoryPlanError):
        small.on_train_begin(_args(), state, control, model=model, optimizer=opt, train_dataloader=_loader())
    warn = HFPreflightCallback(capacity="256KiB", device="cpu", raise_on_misfit=False)
    warn.on_train_begin(_args(), state, control, model=model, optimizer=opt, train_dataloader=_loader())
    assert warn.estimate.fits is False


def test_hf_trainer_end_to_end(tmp_path):
    pytest.importorskip("accelerate")
    from memplan.validate.integrations import HFPreflightCallback

    args = transformers.TrainingArguments(output_dir=str(tmp_path), per_device_train_batch_size=4, max_steps=1,
                                          report_to=[], use_cpu=True, save_strategy="no", logging_strategy="no",
                                          remove_unused_columns=False, disable_tqdm=True)
    cb = HFPreflightCallback(capacity="256KiB", device="cpu")
    trainer = transformers.Trainer(model=_bert(), args=args, train_dataset=DATA, data_collator=_collate,
                                   callbacks=[cb])
    with pytest.raises(MemoryPlanError):
        trainer.train()


def test_lightning_callback():
    pl = pytest.importorskip("lightning.pytorch")
    from memplan.validate.integrations import LightningPreflightCallback

    class Lit(pl.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))

        def training_step(self, batch, idx):
            x, y = batch
            loss = torch.nn.functional.mse_loss(self.net(x), y)
            self.log("loss", loss)
            return loss

        def configure_optimizers(self):
            return torch.optim.Adam(self.parameters())

    ds = torch.utils.data.TensorDataset(torch.randn(16, 32), torch.randn(16, 1))
    loader = torch.utils.data.DataLoader(ds, batch_size=4)
    kw = dict(max_steps=1, accelerator="cpu", logger=False, enable_checkpointing=False,
              enable_progress_bar=False, enable_model_summary=False)
    ok = LightningPreflightCallback(capacity="1GiB", device="cpu")
    pl.Trainer(callbacks=[ok], **kw).fit(Lit(), loader)
    assert ok.estimate.fits is True and ok.estimate.config["batch_size"] == 4
    assert ok.estimate.breakdown_at_peak["optimizer_state"] > 0

    tiny = LightningPreflightCallback(batch_fn=lambda b: (torch.randn(b, 32), torch.randn(b, 1)),
                                      capacity="1KiB", device="cpu", batch_size=4)
    with pytest.raises(MemoryPlanError):
        pl.Trainer(callbacks=[tiny], **kw).fit(Lit(), loader)
