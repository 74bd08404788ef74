"""Hugging Face Trainer on a tiny GPT-2 built from a config (no download): gradient accumulation,
gradient clipping, AdamW with a linear schedule, evaluation; random token data."""
import os
import tempfile

import torch
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments, set_seed

class RandomTokens(torch.utils.data.Dataset):
    def __init__(self, n, length, vocab):
        g = torch.Generator().manual_seed(0)
        self.ids = torch.randint(0, vocab, (n, length), generator=g)
    def __len__(self):
        return len(self.ids)
    def __getitem__(self, i):
        return {'input_ids': self.ids[i], 'labels': self.ids[i]}

set_seed(0)
config = GPT2Config(vocab_size=97, n_positions=32, n_embd=32, n_layer=2, n_head=2)
model = GPT2LMHeadModel(config)
args = TrainingArguments(output_dir=os.path.join(tempfile.gettempdir(), 'hf-trainer-steps'), per_device_train_batch_size=4,
                         gradient_accumulation_steps=2, max_steps=6, logging_steps=1, eval_strategy='steps',
                         eval_steps=3, save_strategy='no', report_to=[], use_cpu=True, seed=0,
                         max_grad_norm=1.0, disable_tqdm=True, dataloader_num_workers=0)
trainer = Trainer(model=model, args=args, train_dataset=RandomTokens(48, 16, 97), eval_dataset=RandomTokens(8, 16, 97))
result = trainer.train()
print('train loss', repr(result.training_loss))
print('eval', trainer.evaluate()['eval_loss'])
print('param checksum', sum(p.double().sum().item() for p in model.parameters()))
