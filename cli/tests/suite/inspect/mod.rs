//! gguf-inspect: its reports, diffs and the loader checks `verify` shares with gguf-quantize.

mod expert_counts_cli;
mod inspect_cli;
mod inspect_diff;
mod inspect_url;
mod nextn_layers_cli;
