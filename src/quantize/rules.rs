//! llama-quantize's per-tensor type selection (llama.cpp 0c1e570, `src/llama-quant.cpp`):
//! which tensors are quantized at all, the tensor categories, the `_S/_M/_L` mixture rules,
//! and the fallback for rows that are not a whole number of blocks.

use ggufkit_quantizers::GgmlType;

use GgmlType as T;

pub use super::ftype::ft;

/// Why the rules cannot pick a type for a tensor.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    /// An MoE tensor whose name has no `blk.N.`.
    #[error("failed to determine the layer of tensor {tensor}")]
    NoLayer {
        /// The tensor.
        tensor: String,
    },
    /// An MoE tensor whose block number is not below the block count.
    #[error("bad layer {layer} for tensor {tensor}: must be in [0, {n_layer})")]
    BadLayer {
        /// The tensor.
        tensor: String,
        /// Its block number.
        layer: i64,
        /// The model's block count.
        n_layer: i64,
    },
    /// A row length that is not a whole number of blocks of a type without a fallback.
    #[error("no tensor type fallback is defined for type {0}")]
    NoFallback(GgmlType),
    /// A rule for this tensor reads the head counts of layer 0 (`n_gqa`) of a file without
    /// layers (a projector file: no `{arch}.block_count`), where llama-quantize aborts.
    #[error(
        "tensor {tensor}: the rules of this type read the attention head counts of layer 0, \
         and the file has no layers (llama-quantize aborts on it)"
    )]
    NoLayers {
        /// The tensor.
        tensor: String,
    },
}

/// The broad role of a tensor (`tensor_get_category`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Category {
    /// `output.weight`
    Output,
    /// `token_embd.weight`, `per_layer_token_embd.weight`
    TokenEmbd,
    /// fused QKV
    AttnQkv,
    /// MLA kv_b
    AttnKvB,
    /// V projection
    AttnV,
    /// K projection
    AttnK,
    /// Q projection
    AttnQ,
    /// attention output projection
    AttnOutput,
    /// any `ffn_up*`
    FfnUp,
    /// any `ffn_gate*`
    FfnGate,
    /// any `ffn_down*`
    FfnDown,
    /// everything else
    Other,
}

impl Category {
    /// Classifies a tensor name (first match in llama.cpp's order).
    pub fn of(name: &str) -> Category {
        if name == "output.weight" {
            return Category::Output;
        }
        if is_token_embd(name) {
            return Category::TokenEmbd;
        }
        const BY_SUBSTRING: [(&str, Category); 9] = [
            ("attn_qkv.weight", Category::AttnQkv),
            ("attn_kv_b.weight", Category::AttnKvB),
            ("attn_v.weight", Category::AttnV),
            ("attn_k.weight", Category::AttnK),
            ("attn_q.weight", Category::AttnQ),
            ("attn_output.weight", Category::AttnOutput),
            ("ffn_up", Category::FfnUp),
            ("ffn_gate", Category::FfnGate),
            ("ffn_down", Category::FfnDown),
        ];
        BY_SUBSTRING
            .iter()
            .find(|(s, _)| name.contains(s))
            .map_or(Category::Other, |(_, c)| *c)
    }

    /// The attn_v-like categories, which are more sensitive to quantization.
    pub fn is_attn_v(self) -> bool {
        matches!(
            self,
            Category::AttnV | Category::AttnQkv | Category::AttnKvB
        )
    }
}

/// `token_embd.weight` or `per_layer_token_embd.weight`.
pub fn is_token_embd(name: &str) -> bool {
    name == "token_embd.weight" || name == "per_layer_token_embd.weight"
}

/// Substrings that keep a tensor unquantized for every architecture.
const NEVER_QUANTIZED: &[&str] = &[
    "_norm.weight",
    "ffn_gate_inp.weight",
    "ffn_gate_tid2eid.weight",
    "altup",
    "laurel",
    "per_layer_model_proj",
    "ssm_conv1d",
    "shortconv.conv.weight",
    "indexer.k_proj.weight",
    "indexer.q_proj.weight",
    "time_mix_first.weight",
    "time_mix_w0.weight",
    "time_mix_w1.weight",
    "time_mix_w2.weight",
    "time_mix_v0.weight",
    "time_mix_v1.weight",
    "time_mix_v2.weight",
    "time_mix_a0.weight",
    "time_mix_a1.weight",
    "time_mix_a2.weight",
    "time_mix_g1.weight",
    "time_mix_g2.weight",
    "time_mix_decay_w1.weight",
    "time_mix_decay_w2.weight",
    "time_mix_lerp_fused.weight",
    "attn_rel_b.weight",
    ".position_embd",
    "sam.pos_embd",
    "sam.neck.",
    "sam.net_",
    ".rel_pos",
    ".patch_embd",
    ".patch_merger",
    "a.rvq.codebook",
    "mm.a.code_embd",
];

/// Extra substrings kept unquantized for the glm5-next architecture.
const NEVER_QUANTIZED_GLM5_NEXT: &[&str] = &[
    "hc_",
    "indexer.attn_q_b",
    "indexer.attn_k",
    "indexer.proj",
    "indexer_compressor_gate",
    "indexer_compressor_ape",
    "ssm_f_a.weight",
    "ssm_f_b.weight",
    "ssm_g_a.weight",
    "ssm_g_b.weight",
    "ssm_beta.weight",
    "attn_kv_a_mqa.weight",
    "attn_k_b.weight",
    "attn_v_b.weight",
];

/// `ggml_n_dims`: the number of dimensions ignoring trailing 1s (at least 1).
pub fn n_dims(dims: &[u64]) -> usize {
    dims.iter().rposition(|&d| d != 1).map_or(1, |i| i + 1)
}

/// `tensor_allows_quantization`: may this tensor change type at all?
pub fn allows_quantization(name: &str, dims: &[u64], arch: &str, leave_output: bool) -> bool {
    if n_dims(dims) < 2 || !name.ends_with("weight") {
        return false;
    }
    if leave_output && name == "output.weight" {
        return false;
    }
    if name == "position_embd.weight" || name == "token_types.weight" {
        return false;
    }
    if NEVER_QUANTIZED.iter().any(|s| name.contains(s)) {
        return false;
    }
    !(arch == "glm5-next" && NEVER_QUANTIZED_GLM5_NEXT.iter().any(|s| name.contains(s)))
}

/// The model facts the rules look at.
#[derive(Debug, Clone, Default)]
pub struct ModelFacts {
    /// `general.architecture`.
    pub arch: String,
    /// `{arch}.block_count` (`n_layer_all`).
    pub n_layer: i64,
    /// `n_head / n_head_kv` of layer 0 (0 when n_head_kv is 0).
    pub n_gqa: i64,
    /// `{arch}.expert_count` (0 when absent).
    pub n_expert: i64,
    /// LLaMA with 80 layers and grouped-query attention (llama.cpp's `LLM_TYPE_70B`).
    pub is_70b: bool,
}

/// What the caller asked for, as the rules see it.
#[derive(Debug, Clone)]
pub struct RuleOptions {
    /// The llama_ftype id.
    pub ftype: u32,
    /// An importance matrix is in use.
    pub has_imatrix: bool,
    /// `--output-tensor-type`.
    pub output_tensor_type: Option<GgmlType>,
    /// `--token-embedding-type`.
    pub token_embedding_type: Option<GgmlType>,
}

/// The running counters of the mixture rules (`quantize_state_impl`).
#[derive(Debug, Clone, Default)]
pub struct MixState {
    /// Number of attn_v-like tensors.
    pub n_attention_wv: i64,
    /// True unless an `output.weight` exists.
    pub tied_embeddings: bool,
    i_attention_wv: i64,
    i_ffn_down: i64,
    i_ffn_gate: i64,
    i_ffn_up: i64,
    /// Tensors that needed the row-length fallback.
    pub n_fallback: usize,
}

impl MixState {
    /// Counters initialised from the names of all kept tensors.
    pub fn new<'a>(names: impl Iterator<Item = &'a str>) -> MixState {
        let mut s = MixState {
            tied_embeddings: true,
            ..Default::default()
        };
        for n in names {
            let c = Category::of(n);
            if c.is_attn_v() {
                s.n_attention_wv += 1;
            }
            if c == Category::Output {
                s.tied_embeddings = false;
            }
        }
        s
    }
}

fn use_more_bits(i: i64, n: i64) -> bool {
    i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2
}

/// The layer a tensor belongs to: parsed from `blk.N.` for MoE models, else the counter.
fn layer_info(
    counter: i64,
    n: i64,
    name: &str,
    facts: &ModelFacts,
) -> Result<(i64, i64), RuleError> {
    if facts.n_expert.max(1) <= 1 {
        return Ok((counter, n));
    }
    let layer = parse_block_index(name).ok_or_else(|| RuleError::NoLayer {
        tensor: name.to_string(),
    })?;
    if layer < 0 || layer >= n {
        return Err(RuleError::BadLayer {
            tensor: name.to_string(),
            layer,
            n_layer: n,
        });
    }
    Ok((layer, n))
}

/// `sscanf(name, "blk.%d.")`: the block number, when the name starts with `blk.<int>.`.
pub fn parse_block_index(name: &str) -> Option<i64> {
    let rest = name.strip_prefix("blk.")?;
    let rest_trim = rest.trim_start();
    let (sign, digits_start) = match rest_trim.as_bytes().first() {
        Some(b'-') => (-1, 1),
        Some(b'+') => (1, 1),
        _ => (1, 0),
    };
    let digits: String = rest_trim[digits_start..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    if digits.is_empty() {
        return None;
    }
    let v: i64 = digits.parse().ok()?;
    // sscanf's %d stores whatever it parsed even when the trailing "." does not match.
    Some(sign * v)
}

/// `n_gqa() >= 4`: llama.cpp reads layer 0's head counts, and aborts for a file without
/// layers.
fn gqa4(facts: &ModelFacts, name: &str) -> Result<bool, RuleError> {
    if facts.n_layer <= 0 {
        return Err(RuleError::NoLayers {
            tensor: name.to_string(),
        });
    }
    Ok(facts.n_gqa >= 4)
}

/// `llama_tensor_get_type_impl`: the mixture rules. `t` is the ftype's default type.
pub fn mixture(
    st: &mut MixState,
    facts: &ModelFacts,
    opts: &RuleOptions,
    name: &str,
    dims: &[u64],
    cat: Category,
    mut t: GgmlType,
) -> Result<GgmlType, RuleError> {
    let f = opts.ftype;
    let falcon = facts.arch == "falcon";
    if facts.arch == "glm5-next"
        && ["attn_q_a", "attn_q_b", "nextn.eh_proj"]
            .iter()
            .any(|s| name.contains(s))
        && !matches!(t, T::F32 | T::BF16 | T::F16)
    {
        return Ok(T::Q8_0);
    }
    let ne0 = dims.first().copied().unwrap_or(1);
    let very_low = [
        ft::IQ2_XXS,
        ft::IQ2_XS,
        ft::IQ1_S,
        ft::IQ2_S,
        ft::IQ2_M,
        ft::IQ1_M,
    ];
    let iq2_s_or_m = f == ft::IQ2_S || f == ft::IQ2_M;

    if cat == Category::Output || (st.tied_embeddings && cat == Category::TokenEmbd) {
        t = if let Some(o) = opts.output_tensor_type {
            o
        } else if f == ft::MXFP4_MOE || falcon || ne0 % t.block_size() as u64 != 0 {
            T::Q8_0
        } else if [
            ft::IQ2_XXS,
            ft::IQ2_XS,
            ft::IQ3_XXS,
            ft::IQ1_S,
            ft::IQ2_S,
            ft::IQ2_M,
            ft::IQ1_M,
        ]
        .contains(&f)
        {
            T::Q5_K
        } else if t != T::Q8_0 {
            T::Q6_K
        } else {
            t
        };
    } else if f == ft::MXFP4_MOE {
        let bailing_expert = facts.arch == "bailingmoe3"
            && matches!(cat, Category::FfnUp | Category::FfnGate | Category::FfnDown);
        let ne2 = dims.get(2).copied().unwrap_or(1);
        t = if ne2 > 1 && (facts.arch != "bailingmoe3" || bailing_expert) {
            T::MXFP4
        } else {
            T::Q8_0
        };
    } else if cat == Category::TokenEmbd {
        if let Some(e) = opts.token_embedding_type {
            t = e;
        } else if [ft::IQ2_XXS, ft::IQ2_XS, ft::IQ1_S, ft::IQ1_M].contains(&f) {
            t = T::Q2_K;
        } else if iq2_s_or_m || f == ft::IQ3_XXS {
            t = T::IQ3_S;
        } else if [ft::TQ1_0, ft::TQ2_0, ft::Q2_0].contains(&f) {
            t = T::Q4_K;
        }
    } else if very_low.contains(&f) {
        if cat.is_attn_v() {
            t = if gqa4(facts, name)? || facts.n_expert >= 4 {
                T::Q4_K
            } else if iq2_s_or_m {
                T::IQ3_S
            } else {
                T::Q2_K
            };
            st.i_attention_wv += 1;
        } else if facts.n_expert == 8 && cat == Category::AttnK {
            t = T::Q4_K;
        } else if cat == Category::FfnDown {
            if st.i_ffn_down < facts.n_layer / 8 {
                t = if iq2_s_or_m { T::IQ3_S } else { T::Q2_K };
            }
            st.i_ffn_down += 1;
        } else if cat == Category::AttnOutput {
            if facts.n_expert == 8 {
                t = T::Q5_K;
            } else if f == ft::IQ1_S || f == ft::IQ1_M {
                t = T::IQ2_XXS;
            } else if iq2_s_or_m {
                t = T::IQ3_S;
            }
        }
    } else if cat.is_attn_v() {
        // llama.cpp evaluates `n_gqa()` only for the types that ask for it
        let (i, n) = (st.i_attention_wv, st.n_attention_wv);
        match f {
            ft::Q2_K => t = if gqa4(facts, name)? { T::Q4_K } else { T::Q3_K },
            ft::Q2_K_S if gqa4(facts, name)? => t = T::Q4_K,
            ft::IQ3_XXS => {
                t = if gqa4(facts, name)? {
                    T::Q4_K
                } else if !opts.has_imatrix {
                    T::IQ3_S
                } else {
                    T::IQ3_XXS
                }
            }
            ft::IQ3_XS | ft::IQ3_S if gqa4(facts, name)? => t = T::Q4_K,
            ft::IQ3_M => t = T::Q4_K,
            ft::Q3_K_M => t = if i < 2 { T::Q5_K } else { T::Q4_K },
            ft::Q3_K_L => t = T::Q5_K,
            ft::IQ4_NL | ft::IQ4_XS if gqa4(facts, name)? => t = T::Q5_K,
            ft::Q4_K_M | ft::Q5_K_M if use_more_bits(i, n) => t = T::Q6_K,
            ft::Q4_K_S if i < 4 => t = T::Q5_K,
            _ => {}
        }
        if facts.is_70b && matches!(t, T::Q3_K | T::Q4_K) {
            t = T::Q5_K;
        }
        if facts.n_expert == 8 {
            t = T::Q8_0;
        }
        st.i_attention_wv += 1;
    } else if cat == Category::AttnK {
        if facts.n_expert == 8 {
            t = T::Q8_0;
        } else if f == ft::IQ3_XS {
            t = T::IQ3_XXS;
        } else if f == ft::IQ3_XXS {
            t = T::IQ2_S;
        }
    } else if cat == Category::AttnQ {
        if f == ft::IQ3_XS {
            t = T::IQ3_XXS;
        } else if f == ft::IQ3_XXS {
            t = T::IQ2_S;
        }
    } else if cat == Category::FfnDown {
        let (i, n) = layer_info(st.i_ffn_down, facts.n_layer, name, facts)?;
        match f {
            ft::Q2_K => t = T::Q3_K,
            ft::Q2_K_S if i < n / 8 => t = T::Q4_K,
            ft::Q2_K_S => {}
            ft::IQ3_XXS if !opts.has_imatrix => t = if i < n / 8 { T::Q4_K } else { T::Q3_K },
            ft::Q3_K_M => {
                t = if i < n / 16 {
                    T::Q5_K
                } else if !falcon || use_more_bits(i, n) {
                    T::Q4_K
                } else {
                    T::Q3_K
                }
            }
            ft::IQ3_M if i < n / 8 || (facts.n_expert == 8 && use_more_bits(i, n)) => t = T::Q4_K,
            ft::Q3_K_L => t = if falcon { T::Q4_K } else { T::Q5_K },
            ft::Q4_K_M => {
                if falcon {
                    t = if i < n / 16 {
                        T::Q6_K
                    } else if use_more_bits(i, n) {
                        T::Q5_K
                    } else {
                        T::Q4_K
                    };
                } else if use_more_bits(i, n) {
                    t = T::Q6_K;
                }
            }
            ft::IQ4_NL | ft::IQ4_XS if i < n / 8 && !opts.has_imatrix => t = T::Q5_K,
            ft::Q5_K_M if use_more_bits(i, n) => t = T::Q6_K,
            ft::Q4_K_S if !falcon && i < n / 8 => t = T::Q5_K,
            ft::Q4_0 | ft::Q5_0 if opts.has_imatrix && i < n / 8 => {
                t = if f == ft::Q4_0 { T::Q4_1 } else { T::Q5_1 }
            }
            _ => {}
        }
        st.i_ffn_down += 1;
    } else if cat == Category::AttnOutput {
        if !falcon {
            if facts.n_expert == 8 {
                let bumped = [
                    ft::Q2_K,
                    ft::IQ3_XS,
                    ft::IQ3_XXS,
                    ft::Q3_K_S,
                    ft::Q3_K_M,
                    ft::IQ4_NL,
                    ft::Q4_K_S,
                    ft::Q4_K_M,
                    ft::IQ3_S,
                    ft::IQ3_M,
                    ft::IQ4_XS,
                ];
                if bumped.contains(&f) {
                    t = T::Q5_K;
                }
            } else {
                match f {
                    ft::Q2_K => t = T::Q3_K,
                    ft::IQ3_XXS => t = T::IQ3_S,
                    ft::Q3_K_M | ft::IQ3_M => t = T::Q4_K,
                    ft::Q3_K_L => t = T::Q5_K,
                    _ => {}
                }
            }
        } else if f == ft::Q3_K_L {
            t = T::Q4_K;
        }
    } else if cat == Category::AttnQkv {
        // Unreachable in llama.cpp too (attn_qkv is attn_v-like, handled above); kept so
        // that the rule table reads like the reference.
        match f {
            ft::Q3_K_M | ft::Q3_K_L | ft::IQ3_M => t = T::Q4_K,
            ft::Q4_K_M => t = T::Q5_K,
            ft::Q5_K_M => t = T::Q6_K,
            _ => {}
        }
    } else if cat == Category::FfnGate || cat == Category::FfnUp {
        let counter = if cat == Category::FfnGate {
            &mut st.i_ffn_gate
        } else {
            &mut st.i_ffn_up
        };
        let (i, n) = layer_info(*counter, facts.n_layer, name, facts)?;
        if f == ft::IQ3_XS && i >= n / 8 && i < 7 * n / 8 {
            t = T::IQ3_XXS;
        }
        *counter += 1;
    }
    Ok(t)
}

/// `tensor_type_fallback`: a type whose block divides the row length `ne0`. Returns the
/// type and whether a fallback happened.
pub fn fallback(ne0: u64, t: GgmlType) -> Result<(GgmlType, bool), RuleError> {
    let bs = t.block_size() as u64;
    if ne0.is_multiple_of(bs) {
        return Ok((t, false));
    }
    let mut r = match t {
        T::IQ1_S
        | T::IQ1_M
        | T::IQ2_XXS
        | T::IQ2_XS
        | T::IQ2_S
        | T::IQ3_XXS
        | T::IQ3_S
        | T::IQ4_XS => T::IQ4_NL,
        T::Q2_0 | T::Q2_K | T::Q3_K | T::TQ1_0 | T::TQ2_0 => T::Q4_0,
        T::Q4_K => T::Q5_0,
        T::Q5_K => T::Q5_1,
        T::Q6_K => T::Q8_0,
        _ if bs <= 32 => t,
        _ => return Err(RuleError::NoFallback(t)),
    };
    if !ne0.is_multiple_of(r.block_size() as u64) {
        r = T::F16;
    }
    Ok((r, true))
}

/// `tensor_requires_imatrix`: would quantizing to `t` without an imatrix give garbage?
pub fn requires_imatrix(name: &str, t: GgmlType, ftype: u32) -> bool {
    if is_token_embd(name) || name == "output.weight" {
        return false;
    }
    match t {
        T::IQ3_XXS | T::IQ2_XXS | T::IQ2_XS | T::IQ2_S | T::IQ1_M | T::IQ1_S => true,
        T::Q2_K => ftype == ft::Q2_K_S,
        _ => false,
    }
}

/// The order llama.cpp's model loader keeps weights in: block number (`blk.N.`, −1 for
/// other tensors), then the name byte-wise.
pub fn weights_order(a: &str, b: &str) -> std::cmp::Ordering {
    let la = parse_block_index(a).unwrap_or(-1);
    let lb = parse_block_index(b).unwrap_or(-1);
    la.cmp(&lb).then_with(|| a.as_bytes().cmp(b.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The state-space tensors as llama-quantize treats them: the conv1d kernels (Mamba's,
    /// LFM2's) and the `ssm_a` / `ssm_d` tensors (no `.weight` suffix) keep their type, the
    /// projections and the dt weight are quantized, norms never (the SSM goldens check
    /// the resulting types).
    #[test]
    fn state_space_tensors() {
        let q = |n: &str, dims: &[u64]| allows_quantization(n, dims, "mamba", false);
        assert!(!q("blk.0.ssm_conv1d.weight", &[4, 256]));
        assert!(!q("blk.0.shortconv.conv.weight", &[3, 64]));
        assert!(!q("blk.0.ssm_a", &[16, 256]));
        assert!(!q("blk.0.ssm_d", &[1, 8]));
        assert!(!q("blk.0.ssm_norm.weight", &[64, 2]));
        assert!(!q("blk.0.ssm_dt.bias", &[256]));
        for n in ["ssm_in", "ssm_out", "ssm_x", "ssm_dt", "shortconv.in_proj"] {
            assert!(q(&format!("blk.0.{n}.weight"), &[256, 64]), "{n}");
        }
        assert_eq!(Category::of("blk.0.ssm_in.weight"), Category::Other);
    }

    #[test]
    fn categories_follow_llama_cpp_order() {
        assert_eq!(Category::of("output.weight"), Category::Output);
        assert_eq!(Category::of("blk.0.attn_qkv.weight"), Category::AttnQkv);
        assert_eq!(
            Category::of("blk.3.ffn_down_exps.weight"),
            Category::FfnDown
        );
        assert_eq!(Category::of("blk.3.ffn_gate_inp.weight"), Category::FfnGate);
        assert_eq!(Category::of("blk.0.attn_norm.weight"), Category::Other);
    }

    #[test]
    fn quantizable_tensors() {
        assert!(allows_quantization(
            "blk.0.attn_q.weight",
            &[256, 256],
            "llama",
            false
        ));
        assert!(!allows_quantization(
            "blk.0.attn_norm.weight",
            &[256, 256],
            "llama",
            false
        ));
        assert!(!allows_quantization(
            "blk.0.attn_q.weight",
            &[256, 1],
            "llama",
            false
        ));
        assert!(!allows_quantization(
            "blk.0.attn_q.bias",
            &[256, 256],
            "llama",
            false
        ));
        assert!(!allows_quantization(
            "output.weight",
            &[256, 256],
            "llama",
            true
        ));
        assert!(!allows_quantization(
            "position_embd.weight",
            &[256, 256],
            "bert",
            false
        ));
        assert!(!allows_quantization(
            "blk.0.ffn_gate_inp.weight",
            &[256, 8],
            "mixtral",
            false
        ));
        assert!(!allows_quantization(
            "blk.0.hc_x.weight",
            &[256, 8],
            "glm5-next",
            false
        ));
    }

    #[test]
    fn fallback_table() {
        assert_eq!(fallback(256, T::Q4_K), Ok((T::Q4_K, false)));
        assert_eq!(fallback(128, T::Q4_K), Ok((T::Q5_0, true)));
        assert_eq!(fallback(64, T::IQ4_XS), Ok((T::IQ4_NL, true)));
        assert_eq!(fallback(48, T::Q4_0), Ok((T::F16, true)));
        assert_eq!(fallback(48, T::Q6_K), Ok((T::F16, true)));
        assert!(fallback(128, T::NVFP4).is_ok());
        assert_eq!(
            fallback(100, T::Q1_0).unwrap_err().to_string(),
            "no tensor type fallback is defined for type q1_0"
        );
    }

    #[test]
    fn weights_map_order() {
        let mut v = vec![
            "blk.1.a",
            "output.weight",
            "blk.10.a",
            "blk.2.b",
            "token_embd.weight",
            "blk.2.a",
        ];
        v.sort_by(|a, b| weights_order(a, b));
        assert_eq!(
            v,
            [
                "output.weight",
                "token_embd.weight",
                "blk.1.a",
                "blk.2.a",
                "blk.2.b",
                "blk.10.a"
            ]
        );
    }

    #[test]
    fn use_more_bits_for_two_layers() {
        assert!(!use_more_bits(0, 2));
        assert!(use_more_bits(1, 2));
    }
}
