//! gguf-quantize end to end: llama-quantize's outputs and command lines, IQ types, pruning,
//! importance matrices, budget mode and recipes.

mod budget_cli;
mod imatrix;
mod quantize_cli;
mod quantize_golden;
mod quantize_iq_golden;
mod quantize_mmproj;
mod quantize_prune;
mod quantize_url;
mod recipe_cli;
