//! `RND1` (arch `rnd1`, `RND1Model` in `conversion/qwen.py`): Radical Numerics' diffusion
//! language model, Qwen3-MoE's layout converted as Qwen2-MoE (`super::qwen::QWEN2MOE`:
//! fused or per-expert experts, the expert FFN sizes) with bidirectional attention and the
//! config's `mask_token_id` when it has one.

use ggufkit::gguf::keys::attention;

use super::qwen::{moe_params, QWEN2MOE};
use super::Arch;
use crate::hf::names::{Tensor, MOE_DECODER};
use crate::hf::params::Params;
use crate::ConvertError;

/// RND1.
pub const RND1: Arch = Arch {
    hf_names: &["RND1"],
    // Remote code only: AutoConfig cannot type the config, which is read as written.
    model_types: &[],
    gguf: "rnd1",
    tensors: &[MOE_DECODER, &[Tensor::AttnQNorm, Tensor::AttnKNorm]],
    params,
    ..QWEN2MOE
};

/// `RND1Model.set_gguf_parameters`.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    moe_params(p)?;
    p.bool(attention::CAUSAL, false);
    super::dream::mask_token_id(p)
}
