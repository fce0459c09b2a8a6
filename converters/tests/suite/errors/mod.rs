//! Bad but not hostile inputs give clear errors naming the file, tensor or value at fault.

mod bailingmoe_refusals;
mod float_overflow;
mod hf_errors;
mod kimi_linear_refusals;
mod lfm2_colbert_refusals;
mod minimax01_refusals;
mod phi4v_refusals;
mod rwkv_vocab;
