//! Hostile inputs of the converters' readers (safetensors, index, tokenizer files,
//! config.json, PyTorch pickles, legacy files): typed errors, never a panic, a hang, code
//! execution or an allocation sized by an untrusted count, also under a memory limit.

mod hardening_hf;
mod hostile_hf;
mod legacy_hostile;
mod torch_hostile;
