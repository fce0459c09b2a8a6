//! gguf-convert end to end: golden conversions, llama.cpp's command lines, the HF cache,
//! LoRA adapters, projectors, MTP drafts and Mistral's format.

mod convert_cli;
mod draft_cli;
mod hub_cache;
mod lora_golden;
mod mistral_params_cli;
mod mmproj_cli;
mod mtp_golden;
mod reference_cli;
mod reference_commands;
mod remote_cli;
mod remote_cli_batch;
mod remote_cli_plain;
