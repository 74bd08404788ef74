"""A few training steps of a tiny GPT-2 through Hugging Face peft adapters (LoRA with dropout,
then IA3), for docs/real-code.md: gradient accumulation, clipping, AdamW on the adapter weights
only, then merge_and_unload. Prints losses and a checksum of the trained weights; no download."""
import torch
from peft import IA3Config, LoraConfig, get_peft_model
from transformers import GPT2Config, GPT2LMHeadModel


def tiny_gpt2():
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=64, n_positions=32, n_embd=32, n_layer=2, n_head=2,
                        bos_token_id=0, eos_token_id=0)
    return GPT2LMHeadModel(config)


def train(model, name, steps=4, accumulate=2):
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(trainable, lr=1e-2)
    generator = torch.Generator().manual_seed(1)
    model.train()
    for step in range(steps):
        for micro in range(accumulate):
            tokens = torch.randint(0, 64, (4, 16), generator=generator)
            loss = model(input_ids=tokens, labels=tokens).loss / accumulate
            loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(trainable, 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        print(f'{name} step {step} loss {loss.item() * accumulate:.8f} grad-norm {norm.item():.8f}')
    checksum = sum(p.detach().double().sum().item() for p in trainable)
    print(f'{name} trainable {sum(p.numel() for p in trainable)} checksum {checksum:.10f}')


def main():
    lora = get_peft_model(tiny_gpt2(), LoraConfig(r=4, lora_alpha=8, lora_dropout=0.1,
                                                  target_modules=['c_attn', 'c_proj'], fan_in_fan_out=True))
    train(lora, 'lora')
    lora.eval()
    tokens = torch.arange(16).reshape(1, 16)
    with torch.no_grad():
        before = lora(input_ids=tokens).logits
        merged = lora.merge_and_unload()
        after = merged(input_ids=tokens).logits
    print(f'merged max difference {(before - after).abs().max().item():.3e}')
    ia3 = get_peft_model(tiny_gpt2(), IA3Config(target_modules=['c_attn', 'mlp.c_proj'],
                                                feedforward_modules=['mlp.c_proj'], fan_in_fan_out=True))
    train(ia3, 'ia3')


if __name__ == '__main__':
    main()
