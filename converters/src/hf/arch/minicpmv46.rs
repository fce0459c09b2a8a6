//! `MiniCPMV4_6ForConditionalGeneration`'s text half (arch `qwen35`, `MiniCPMV4_6TextModel` in
//! `conversion/minicpm.py`).
//!
//! Qwen3.5's conversion of the composite's `text_config` (transformers builds it as the class
//! its `model_type` names, `qwen3_5_text` by default), with the final merger
//! (`model.merger.`) and every tensor whose name starts with `mtp` dropped before Qwen3.5's
//! own renames. The next-token-prediction layers the config declares
//! (`mtp_num_hidden_layers`) are still counted in the block count and written as
//! `nextn_predict_layers`, without their tensors, as the reference does; a config without that
//! count has no MTP layer to count (the dropped tensors are not seen) and is refused unless
//! `--no-mtp` leaves the MTP layers out.

use super::qwen3next::QWEN35;
use super::{Arch, TextType};

/// The MiniCPM-V 4.6 text model.
pub const MINICPMV46: Arch = Arch {
    hf_names: &["MiniCPMV4_6ForConditionalGeneration"],
    model_types: &[],
    composites: &[("minicpmv4_6", TextType::Named("qwen3_5_text"))],
    filter,
    ..QWEN35
};

/// The merger and the MTP block dropped, by the checkpoint's names.
fn filter(name: &str) -> Option<String> {
    if name.starts_with("model.merger.") || name.starts_with("mtp") {
        return None;
    }
    (QWEN35.filter)(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_merger_and_the_mtp_block_are_dropped() {
        assert_eq!(filter("model.merger.mlp.0.linear_1.weight"), None);
        assert_eq!(filter("mtp.layers.0.mlp.up_proj.weight"), None);
        assert_eq!(filter("mtp.fc.weight"), None);
        // only by the leading name: the text model's MTP spelling is Qwen3.5's to rename
        assert_eq!(
            filter("model.language_model.mtp.fc.weight").as_deref(),
            Some("model.language_model.mtp.fc.weight")
        );
        assert_eq!(
            filter("model.language_model.layers.0.mlp.up_proj.weight").as_deref(),
            Some("model.language_model.layers.0.mlp.up_proj.weight")
        );
    }
}
