//! params.json checked against itself and against the weights of a Mistral native directory,
//! before anything is converted: a size of zero, a head count the key/value heads do not
//! divide, or a size or layer count the tensors contradict would otherwise be written into
//! a GGUF file no loader accepts.
//!
//! Only what the weights pin down is compared: the embedding width (`dim`), the attention
//! projections of the standard layout (`head_dim` with `n_heads` / `n_kv_heads`), the dense
//! feed-forward width (`hidden_dim`) and the number of layers. The latent-attention layout
//! of the MoE models has no `attention.wq` and is checked for sizes and layers only.

use std::path::Path;

use serde_json::{Map, Value as Json};

use super::safetensors::StTensor;
use crate::ConvertError;

/// Checks params.json (`map`, read from `path`) against itself and against `tensors`.
pub fn check(
    path: &Path,
    map: &Map<String, Json>,
    tensors: &[StTensor],
) -> Result<(), ConvertError> {
    let refuse = |problem: String| ConvertError::format(path, None, problem);
    let dim = size(path, map, "dim")?;
    let n_heads = size(path, map, "n_heads")?;
    let n_kv_heads = size(path, map, "n_kv_heads")?;
    let head_dim = size(path, map, "head_dim")?;
    let hidden_dim = size(path, map, "hidden_dim")?;
    let n_layers = size(path, map, "n_layers")?;
    for (key, value) in [
        ("dim", dim),
        ("n_heads", n_heads),
        ("head_dim", head_dim),
        ("hidden_dim", hidden_dim),
    ] {
        if value == Some(0) {
            return Err(refuse(format!("{key} is 0: a model size must be positive")));
        }
    }
    if let (Some(heads), Some(kv)) = (n_heads, n_kv_heads) {
        if kv == 0 || kv > heads || heads % kv != 0 {
            return Err(refuse(format!(
                "n_kv_heads is {kv} and n_heads is {heads}: the key/value heads must be \
                 between 1 and n_heads and divide it"
            )));
        }
    }
    let shape = |name: &str| {
        tensors
            .iter()
            .find(|t| t.name == name)
            .map(|t| t.shape.as_slice())
    };
    let contradiction = |key: &str, value: u64, expected: u64, tensor: &str, shape: &[u64]| {
        refuse(format!(
            "{key} is {value} but tensor {tensor} has shape {shape:?} (which means {key} {expected})"
        ))
    };
    if let (Some(dim), Some(s @ [_, width])) = (dim, shape("tok_embeddings.weight")) {
        if *width != dim {
            return Err(contradiction(
                "dim",
                dim,
                *width,
                "tok_embeddings.weight",
                s,
            ));
        }
    }
    if let Some(head_dim) = head_dim {
        for (key, heads, tensor) in [
            ("n_heads", n_heads, "layers.0.attention.wq.weight"),
            ("n_kv_heads", n_kv_heads, "layers.0.attention.wk.weight"),
        ] {
            if let (Some(heads), Some(s @ [rows, _])) = (heads, shape(tensor)) {
                if heads.checked_mul(head_dim) != Some(*rows) {
                    return Err(refuse(format!(
                        "head_dim {head_dim} × {key} {heads} is not the {rows} rows of tensor \
                         {tensor} (shape {s:?})"
                    )));
                }
            }
        }
    }
    if let Some(hidden_dim) = hidden_dim {
        let w1 = tensors
            .iter()
            .find(|t| t.name.starts_with("layers.") && t.name.ends_with(".feed_forward.w1.weight"));
        if let Some(t) = w1 {
            if let [rows, _] = t.shape.as_slice() {
                if *rows != hidden_dim {
                    return Err(contradiction(
                        "hidden_dim",
                        hidden_dim,
                        *rows,
                        &t.name,
                        &t.shape,
                    ));
                }
            }
        }
    }
    if let (Some(n_layers), Some(present)) = (n_layers, layers_present(tensors)) {
        if n_layers > present {
            return Err(refuse(format!(
                "n_layers is {n_layers} but the weights have {present} layers"
            )));
        }
    }
    Ok(())
}

/// `key` of params.json: absent, or a non-negative integer (anything else is refused).
fn size(path: &Path, map: &Map<String, Json>, key: &str) -> Result<Option<u64>, ConvertError> {
    match map.get(key) {
        None | Some(Json::Null) => Ok(None),
        Some(v) => v.as_u64().map(Some).ok_or_else(|| {
            ConvertError::format(
                path,
                None,
                format!("{key} is {v}: expected a non-negative integer"),
            )
        }),
    }
}

/// One more than the highest `layers.N.` index of the text model's tensors, if any.
fn layers_present(tensors: &[StTensor]) -> Option<u64> {
    tensors
        .iter()
        .filter_map(|t| t.name.strip_prefix("layers."))
        .filter_map(|rest| rest.split('.').next()?.parse::<u64>().ok())
        .max()
        .map(|n| n + 1)
}
