//! The tensor pipeline: source names → filtered, ordered model tensors (`index_tensors`,
//! `filter_tensors`, `dequant_model`) → output tensors with their GGML types
//! (`prepare_tensors`, `modify_tensors`).

use std::collections::HashMap;
use std::path::Path;

use ggufkit::quantizers::GgmlType;
use serde_json::Value as Json;

use super::arch::{Arch, Experts, Modified, QkPermute};
use super::config::{json_u64, Hparams};
use super::expr::Expr;
use super::names::{block_id, TensorMap};
use super::outtype::{self, OutType};
use super::safetensors::{StDtype, StTensor};
use crate::ConvertError;

/// A model tensor after filtering: its (renamed) name, values, and source dtype.
pub struct Entry {
    /// Name after the filters.
    pub name: String,
    /// The values.
    pub expr: Expr,
    /// The source dtype (for `--outtype auto`).
    pub dtype: StDtype,
}

/// `TextModel.filter_tensors` + `ModelBase.filter_tensors`, after the class's own filter.
pub(crate) fn filter_name(arch: &Arch, name: &str) -> Option<String> {
    let name = (arch.filter)(name)?;
    const PREFIXES: &[&str] = &[
        "mlp",
        "vit.",
        "vpm.",
        "siglip2.",
        "conformer.",
        "merger.",
        "resampler.",
        "sound_encoder.",
        "sound_projection.",
        "speech_embeddings.",
    ];
    const PARTS: &[&str] = &[
        "visual.",
        "vision.",
        "audio.",
        "talker.",
        "vision_",
        "audio_",
        "token2wav.",
        "code2wav.",
        "projector.",
        "pre_mm_projector_norm",
        "image_newline",
        "view_seperator",
        "patch_embed",
        "patch_embedding",
        "patch_merger.",
        "patch_merge_mlp.",
        "model.connector.",
    ];
    if PREFIXES.iter().any(|p| name.starts_with(p)) || PARTS.iter().any(|p| name.contains(p)) {
        return None;
    }
    let mut name = name;
    if name.ends_with("e_score_correction_bias") {
        name = name.replace("e_score_correction_bias", "e_score_correction.bias");
    }
    Some(name.replace("language_model.", ""))
}

/// The filtered model tensors in order. A name seen twice keeps its first position and its
/// last value (a Python dict).
pub fn collect(arch: &Arch, sources: Vec<StTensor>) -> Vec<Entry> {
    let mut out: Vec<Entry> = Vec::with_capacity(sources.len());
    let mut pos: HashMap<String, usize> = HashMap::new();
    for t in sources {
        let Some(name) = filter_name(arch, &t.name) else {
            continue;
        };
        let entry = Entry {
            name: name.clone(),
            dtype: t.dtype,
            expr: Expr::read(t),
        };
        match pos.get(&name) {
            Some(&i) => out[i] = entry,
            None => {
                pos.insert(name, out.len());
                out.push(entry);
            }
        }
    }
    out
}

/// `dequant_model` for the checkpoint formats we read: FP8 weights with `*_scale_inv`
/// scales are replaced by their F32 dequantization; other quantized checkpoints are refused.
pub fn dequantize(
    hp: &Hparams,
    dir: &Path,
    entries: Vec<Entry>,
) -> Result<Vec<Entry>, ConvertError> {
    if dir.join("hf_quant_config.json").is_file() {
        return Err(ConvertError::Unsupported(
            "ModelOpt/NVFP4 checkpoints (hf_quant_config.json) are not supported".into(),
        ));
    }
    let Some(Json::Object(qc)) = hp.get("quantization_config") else {
        return Ok(entries);
    };
    let method = qc.get("quant_method").and_then(Json::as_str);
    match method {
        None => return Ok(entries),
        Some("fp8") => {}
        Some(m) => {
            return Err(ConvertError::Unsupported(format!(
                "quantized checkpoints with quant_method {m:?} are not supported (only \"fp8\")"
            )))
        }
    }
    let block: Option<Vec<u64>> = match qc.get("weight_block_size") {
        None | Some(Json::Null) => None,
        Some(Json::Array(a)) => Some(
            a.iter()
                .map(json_u64)
                .collect::<Option<_>>()
                .ok_or_else(|| hp.missing(&["quantization_config.weight_block_size"]))?,
        ),
        Some(_) => return Err(hp.missing(&["quantization_config.weight_block_size"])),
    };
    let pos: HashMap<String, usize> = entries
        .iter()
        .enumerate()
        .map(|(i, e)| (e.name.clone(), i))
        .collect();
    let mut entries: Vec<Option<Entry>> = entries.into_iter().map(Some).collect();
    for i in 0..entries.len() {
        let name = match &entries[i] {
            Some(e) => e.name.clone(),
            None => continue,
        };
        let scale_for = name
            .strip_suffix("_scale_inv")
            .map(str::to_string)
            .or_else(|| {
                name.strip_suffix("qscale_weight")
                    .map(|b| format!("{b}weight"))
            });
        if let Some(wname) = scale_for {
            let wi = *pos.get(&wname).ok_or_else(|| ConvertError::Tensor {
                name: name.clone(),
                problem: format!("scale without its weight '{wname}'"),
            })?;
            let scale = entries[i].take().expect("present").expr;
            let w = entries[wi].as_mut().ok_or_else(|| ConvertError::Tensor {
                name: wname.clone(),
                problem: "weight scaled twice".into(),
            })?;
            w.expr = Expr::dequant(&wname, w.expr.clone(), scale, block.clone())?;
            continue;
        }
        if name.ends_with(".activation_scale")
            || name.ends_with("_activation_scale")
            || name.ends_with(".qscale_act")
        {
            entries[i] = None;
        }
    }
    Ok(entries.into_iter().flatten().collect())
}

/// One output tensor, planned.
pub struct Planned {
    /// GGUF name.
    pub name: String,
    /// Values (PyTorch-order shape).
    pub expr: Expr,
    /// Output type.
    pub ty: GgmlType,
}

/// The `modify_tensors` state of one conversion.
struct Modifier<'a> {
    arch: &'a Arch,
    hp: &'a Hparams,
    dir: &'a Path,
    map: TensorMap,
    /// Buffered stack members per (stack index, block).
    experts: HashMap<(usize, u64), Vec<(String, Expr)>>,
    vocab_rows: Option<u64>,
    /// `token_embd.weight`, kept for [`super::arch::Rules::omit_tied_output`].
    tok_embd: Option<Expr>,
}

fn terr(name: &str, problem: impl Into<String>) -> ConvertError {
    ConvertError::Tensor {
        name: name.to_string(),
        problem: problem.into(),
    }
}

impl<'a> Modifier<'a> {
    fn new(arch: &'a Arch, hp: &'a Hparams, dir: &'a Path) -> Result<Self, ConvertError> {
        Ok(Modifier {
            arch,
            hp,
            dir,
            map: TensorMap::new(arch.tensors, arch.tensor_overrides, hp.block_count()?),
            experts: HashMap::new(),
            vocab_rows: None,
            tok_embd: None,
        })
    }

    fn map_name(&self, name: &str) -> Result<String, ConvertError> {
        self.map.get(name).ok_or_else(|| {
            terr(
                name,
                format!(
                    "can not map tensor (no {} tensor has this name)",
                    self.arch.gguf
                ),
            )
        })
    }

    /// Gemma 3's real vocabulary size: config `vocab_size` with a SentencePiece model,
    /// else the tokenizer.json vocabulary plus its added tokens.
    fn vocab_rows(&mut self) -> Result<u64, ConvertError> {
        if let Some(n) = self.vocab_rows {
            return Ok(n);
        }
        let n = if self.dir.join("tokenizer.model").is_file() {
            self.hp.req_u64(&["vocab_size"])?
        } else {
            let path = self.dir.join("tokenizer.json");
            let tj = super::params::read_json(&path)?;
            let vocab = tj
                .get("model")
                .and_then(|m| m.get("vocab"))
                .map(|v| match v {
                    Json::Object(m) => m.len(),
                    Json::Array(a) => a.len(),
                    _ => 0,
                })
                .unwrap_or(0);
            let added = tj
                .get("added_tokens")
                .and_then(Json::as_array)
                .map_or(0, Vec::len);
            (vocab + added) as u64
        };
        self.vocab_rows = Some(n);
        Ok(n)
    }

    fn modify(
        &mut self,
        name: String,
        expr: Expr,
        bid: Option<u64>,
    ) -> Result<Vec<(String, Expr)>, ConvertError> {
        let out = self.modify_inner(name, expr, bid)?;
        if !self.arch.rules.omit_tied_output {
            return Ok(out);
        }
        let mut kept = Vec::with_capacity(out.len());
        for (name, expr) in out {
            if name == "output.weight" {
                if let Some(embd) = &self.tok_embd {
                    if same_values(embd, &expr)? {
                        continue;
                    }
                }
            } else if name == "token_embd.weight" {
                self.tok_embd = Some(expr.clone());
            }
            kept.push((name, expr));
        }
        Ok(kept)
    }

    fn modify_inner(
        &mut self,
        name: String,
        expr: Expr,
        bid: Option<u64>,
    ) -> Result<Vec<(String, Expr)>, ConvertError> {
        let rules = &self.arch.rules;
        let hp = self.hp;
        let name = match rules.rename {
            Some(r) => r(hp, &name),
            None => name,
        };
        let (mut name, mut expr) = match rules.hook {
            None => (name, expr),
            Some(h) => match h(hp, name, expr)? {
                Modified::Pass(n, e) => (n, e),
                Modified::Drop => return Ok(Vec::new()),
                Modified::Out(v) => {
                    return v
                        .into_iter()
                        .map(|(n, e)| Ok((self.map_name(&n)?, e)))
                        .collect()
                }
            },
        };
        if rules.headless_arch == Some(hp.arch.as_str()) {
            name = format!("model.{name}");
        }
        if rules.permute_qk != QkPermute::No {
            let biases = rules.permute_qk == QkPermute::WeightsAndBiases;
            let is = |proj: &str| {
                name.ends_with(&format!("{proj}.weight"))
                    || (biases && name.ends_with(&format!("{proj}.bias")))
            };
            if is("q_proj") {
                let n_head = hp.req_u64(&["n_heads", "num_attention_heads"])?;
                expr = expr.permute_heads(&name, n_head)?;
            }
            if is("k_proj") {
                let n_head = hp.req_u64(&["n_heads", "num_attention_heads"])?;
                let n_kv = hp
                    .find_u64(&["n_kv_heads", "num_key_value_heads"])?
                    .unwrap_or(n_head);
                expr = expr.permute_heads(&name, n_kv)?;
            }
        }
        if rules.slice_embeddings && name.contains("embed_tokens.weight") {
            let rows = expr.shape().first().copied().unwrap_or(0);
            let n = self.vocab_rows()?.min(rows);
            expr = expr.narrow(&name, 0, 0, n)?;
        }
        if rules.norm_shift && name.ends_with("norm.weight") {
            expr = expr.add_scalar(1.0);
        }
        if rules.transpose.iter().any(|s| name.ends_with(s)) {
            expr = expr.transpose(&name)?;
        }
        if rules.fused_experts {
            if name.ends_with("mlp.experts.down_proj")
                || name.ends_with("mlp.experts.down_proj.weight")
            {
                let mapped = if name.ends_with(".weight") {
                    name.clone()
                } else {
                    format!("{name}.weight")
                };
                return Ok(vec![(self.map_name(&mapped)?, expr)]);
            }
            if name.ends_with("mlp.experts.gate_up_proj")
                || name.ends_with("mlp.experts.gate_up_proj.weight")
            {
                let s = expr.shape().to_vec();
                if s.len() < 3 || !s[s.len() - 2].is_multiple_of(2) {
                    return Err(terr(&name, format!("unexpected gate_up_proj shape {s:?}")));
                }
                let axis = s.len() - 2;
                let n_ff = s[axis] / 2;
                let base = name
                    .trim_end_matches(".weight")
                    .trim_end_matches(".gate_up_proj");
                let gate = expr.clone().narrow(&name, axis, 0, n_ff)?;
                let up = expr.narrow(&name, axis, n_ff, n_ff)?;
                return Ok(vec![
                    (self.map_name(&format!("{base}.gate_proj.weight"))?, gate),
                    (self.map_name(&format!("{base}.up_proj.weight"))?, up),
                ]);
            }
        }
        if let Some(i) = rules.experts.iter().position(|ex| name.contains(ex.marker)) {
            return self.buffer_expert(i, name, expr, bid);
        }
        Ok(vec![(self.map_name(&name)?, expr)])
    }

    fn buffer_expert(
        &mut self,
        index: usize,
        name: String,
        expr: Expr,
        bid: Option<u64>,
    ) -> Result<Vec<(String, Expr)>, ConvertError> {
        let ex: &Experts = &self.arch.rules.experts[index];
        let bid = bid.ok_or_else(|| terr(&name, "expert tensor without a block number"))?;
        let n = self.hp.req_u64(ex.count_keys)?;
        let buf = self.experts.entry((index, bid)).or_default();
        buf.push((name, expr));
        if (buf.len() as u64) < n.saturating_mul(ex.parts.len() as u64) {
            return Ok(Vec::new());
        }
        let mut buf: HashMap<String, Expr> = self
            .experts
            .remove(&(index, bid))
            .unwrap_or_default()
            .into_iter()
            .collect();
        let mut out = Vec::new();
        for w in ex.parts {
            let mut parts = Vec::with_capacity(n as usize);
            for xid in 0..n {
                let ename = ex
                    .expert_name
                    .replace("{bid}", &bid.to_string())
                    .replace("{xid}", &xid.to_string())
                    .replace("{w}", w);
                let e = buf
                    .remove(&ename)
                    .ok_or_else(|| terr(&ename, "expert tensor missing from its layer"))?;
                parts.push(e);
            }
            let merged = ex
                .merged_name
                .replace("{bid}", &bid.to_string())
                .replace("{w}", w);
            let stacked = Expr::stack(&merged, parts)?;
            out.push((self.map_name(&merged)?, stacked));
        }
        if let Some(k) = buf.keys().next() {
            return Err(terr(k, "unexpected tensor among the experts of its layer"));
        }
        Ok(out)
    }
}

/// `torch.equal`: same shape and equal values (read now, at plan time).
fn same_values(a: &Expr, b: &Expr) -> Result<bool, ConvertError> {
    if a.shape() != b.shape() {
        return Ok(false);
    }
    let values = |e: &Expr| {
        e.eval_f32().map_err(|err| ConvertError::Tensor {
            name: e.describe(),
            problem: err.to_string(),
        })
    };
    Ok(values(a)? == values(b)?)
}

/// Tensors the converter skips by name.
fn skipped(name: &str) -> bool {
    [
        ".attention.masked_bias",
        ".attention.bias",
        ".rotary_emb.inv_freq",
    ]
    .iter()
    .any(|s| name.ends_with(s))
}

/// `prepare_tensors`: generated tensors first, then the model's, each mapped, transformed
/// and given its output type.
pub fn plan(
    arch: &Arch,
    hp: &Hparams,
    dir: &Path,
    outtype: OutType,
    generated: Vec<(String, Expr)>,
    entries: Vec<Entry>,
) -> Result<Vec<Planned>, ConvertError> {
    let mut m = Modifier::new(arch, hp, dir)?;
    let mut out: Vec<Planned> = Vec::new();
    let mut seen: HashMap<String, ()> = HashMap::new();
    let mut push = |name: String, expr: Expr, bid: Option<u64>| -> Result<(), ConvertError> {
        if seen.insert(name.clone(), ()).is_some() {
            return Err(terr(&name, "duplicated tensor name"));
        }
        let shape = expr.shape();
        let row = shape.last().copied().unwrap_or(1);
        let ty = outtype::choose(outtype, &name, shape.len(), row, bid);
        out.push(Planned { name, expr, ty });
        Ok(())
    };
    for (name, expr) in generated {
        push(name, expr, None)?;
    }
    for e in entries {
        if skipped(&e.name) {
            continue;
        }
        let bid = block_id(&e.name);
        for (name, expr) in m.modify(e.name, e.expr, bid)? {
            push(name, expr, bid)?;
        }
    }
    let mut left: Vec<String> = m.experts.into_values().flatten().map(|(n, _)| n).collect();
    if !left.is_empty() {
        left.sort();
        return Err(ConvertError::UnprocessedExperts { tensors: left });
    }
    Ok(out)
}

/// A LoRA adapter's tensors: for `W = B·A`, the pair under the base model's name of `W`.
pub struct LoraPair {
    /// The base model's (HF) tensor name.
    pub name: String,
    /// `lora_A`: `[r, in]`.
    pub a: Expr,
    /// `lora_B`: `[out, r]`.
    pub b: Expr,
}

/// convert_lora_to_gguf.py's `prepare_tensors`: the adapter's plain tensors (layer norms
/// that mergekit adds) first, as the base model would write them, then every pair mapped by
/// the base model's rules applied to `B` (row operations only: a rule that touches the
/// columns of `W` has no LoRA form here and is refused), written as `<name>.lora_a` and
/// `<name>.lora_b`.
pub fn plan_lora(
    arch: &Arch,
    hp: &Hparams,
    dir: &Path,
    outtype: OutType,
    plain: Vec<Entry>,
    pairs: Vec<LoraPair>,
) -> Result<Vec<Planned>, ConvertError> {
    let mut m = Modifier::new(arch, hp, dir)?;
    let mut out: Vec<Planned> = Vec::new();
    let mut push = |name: String, expr: Expr, bid: Option<u64>| {
        let shape = expr.shape();
        let row = shape.last().copied().unwrap_or(1);
        let ty = outtype::choose(outtype, &name, shape.len(), row, bid);
        out.push(Planned { name, expr, ty });
    };
    for e in plain {
        let bid = block_id(&e.name);
        for (name, expr) in m.modify(e.name.clone(), e.expr, bid)? {
            if !name.contains("_norm") || expr.shape().len() != 1 {
                return Err(terr(
                    &e.name,
                    "a LoRA adapter holds only lora_A/lora_B pairs and layer norms",
                ));
            }
            push(name, expr, bid);
        }
    }
    for p in pairs {
        let bid = block_id(&p.name);
        let rank = p.a.shape().first().copied();
        if p.a.shape().len() != 2 || p.b.shape().len() != 2 || p.b.shape().get(1).copied() != rank {
            return Err(terr(
                &p.name,
                format!(
                    "lora_A {:?} and lora_B {:?} are not [r, in] and [out, r]",
                    p.a.shape(),
                    p.b.shape()
                ),
            ));
        }
        for (name, b) in m.modify(p.name.clone(), p.b, bid)? {
            if !b.rows_only() || b.shape().get(1).copied() != rank {
                return Err(terr(
                    &p.name,
                    format!(
                        "the {} converter transforms this tensor's columns ({}): no LoRA \
                         adapter form is supported for it",
                        arch.gguf,
                        b.describe()
                    ),
                ));
            }
            // llm_build_inp_embd uses the token embedding's A transposed.
            let a = if name.contains("token_embd.weight") {
                p.a.clone().transpose(&name)?
            } else {
                p.a.clone()
            };
            push(format!("{name}.lora_a"), a, bid);
            push(format!("{name}.lora_b"), b, bid);
        }
    }
    if !m.experts.is_empty() {
        return Err(terr(
            "experts",
            "expert tensors are stacked across files: no LoRA adapter form is supported",
        ));
    }
    Ok(out)
}
