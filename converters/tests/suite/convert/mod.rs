//! Conversions against the reference's outputs, byte for byte: HF fixtures of every
//! architecture and their config and seed variants, pre-quantized and FP8 checkpoints,
//! Mistral's native format, PyTorch checkpoints and torch's float arithmetic, legacy
//! GGML/GGJT files, multimodal projectors, and the transforms no fixture exercises.

mod arch_golden;
mod arch_variants;
mod bailingmoe3_rules;
mod deepseek4_rules;
mod deepseek4v_refusals;
mod dots3_rules;
mod draft_golden;
mod fp8_golden;
mod golden_variants;
mod hf_core;
mod hf_golden;
mod hf_transforms;
mod legacy_golden;
mod mistral_golden;
mod mmproj_config_errors;
mod mmproj_golden;
mod model_dir_reads;
mod prequant_golden;
mod seed_golden;
mod seed_recipes;
mod torch_golden;
mod torch_math_golden;
mod vision_families_b;
mod vl_text_halves;
