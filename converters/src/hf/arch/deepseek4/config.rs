//! transformers' `DeepseekV4Config` as the converter sees it (AutoConfig's `to_dict()`).

use serde_json::{json, Map, Value as Json};

use crate::hf::config::json_u64;

/// `DeepseekV4Config` as AutoConfig's `to_dict()` shows it: `num_local_experts` and
/// `intermediate_size` are stored as `n_routed_experts` / `moe_intermediate_size`; the legacy
/// `compress_ratios`, `compress_rate_*`, `num_hash_layers` and `qk_rope_head_dim` are folded
/// into `layer_types`, `compress_rates`, `mlp_layer_types` and `partial_rotary_factor`;
/// `qk_rope_head_dim` is then `int(head_dim * partial_rotary_factor)`; the rope settings
/// become a `main` and a `compress` dict. A compression ratio other than 0, 4 or 128, or a
/// layer-type list of the wrong length, makes the class raise: `false`, the file is read as
/// written.
pub(super) fn config_class(cfg: &mut Map<String, Json>) -> bool {
    let mut c = cfg.clone();
    let folded = fold_aliases(&mut c)
        .and_then(|legacy| fold_layer_types(&mut c, &legacy).map(|()| legacy))
        .and_then(|legacy| fold_rotary(&mut c, &legacy));
    if folded.is_none() {
        return false;
    }
    *cfg = c;
    true
}

/// The keys the class's `__init__` takes out of the dictionary before it stores the rest.
struct Legacy {
    ratios: Option<Json>,
    n_hash: Option<Json>,
    qk_rope: Option<Json>,
}

/// A key's value unless it is absent or null.
fn present(c: &Map<String, Json>, k: &str) -> Option<Json> {
    c.get(k).filter(|v| !v.is_null()).cloned()
}

/// The attribute aliases, the legacy keys set aside, and `compress_rates` with the two
/// `compress_rate_*` overrides folded in.
fn fold_aliases(c: &mut Map<String, Json>) -> Option<Legacy> {
    for (alias, attr) in [
        ("num_local_experts", "n_routed_experts"),
        ("intermediate_size", "moe_intermediate_size"),
    ] {
        if let Some(v) = c.remove(alias) {
            c.insert(attr.into(), v);
        }
    }
    let legacy = Legacy {
        ratios: c.remove("compress_ratios"),
        n_hash: c.remove("num_hash_layers"),
        qk_rope: c.remove("qk_rope_head_dim"),
    };
    let csa = c.remove("compress_rate_csa");
    let hca = c.remove("compress_rate_hca");
    let mut rates = match present(c, "compress_rates") {
        Some(Json::Object(m)) => m,
        Some(_) => return None,
        None => {
            let mut m = Map::new();
            m.insert("compressed_sparse_attention".into(), json!(4));
            m.insert("heavily_compressed_attention".into(), json!(128));
            m
        }
    };
    if let Some(v) = csa.filter(|v| !v.is_null()) {
        rates.insert("compressed_sparse_attention".into(), v);
    }
    if let Some(v) = hca.filter(|v| !v.is_null()) {
        rates.insert("heavily_compressed_attention".into(), v);
    }
    c.insert("compress_rates".into(), Json::Object(rates));
    Some(legacy)
}

/// `layer_types` (from the legacy compression ratios, or the class's alternating default) and
/// `mlp_layer_types` (the first `num_hash_layers` hash-routed), each checked and cut to the
/// block count.
fn fold_layer_types(c: &mut Map<String, Json>, legacy: &Legacy) -> Option<()> {
    let n = match present(c, "num_hidden_layers") {
        Some(v) => json_u64(&v)? as usize,
        None => 43,
    };
    let layer_types = match present(c, "layer_types") {
        Some(Json::Array(a)) => a,
        Some(_) => return None,
        None => match legacy.ratios.clone().filter(|v| !v.is_null()) {
            Some(Json::Array(r)) => r
                .iter()
                .map(|x| {
                    Some(json!(match json_u64(x)? {
                        0 => "sliding_attention",
                        4 => "compressed_sparse_attention",
                        128 => "heavily_compressed_attention",
                        _ => return None,
                    }))
                })
                .collect::<Option<Vec<_>>>()?,
            Some(_) => return None,
            None => (0..n)
                .map(|i| {
                    json!(if i < 2 || i % 2 == 1 {
                        "heavily_compressed_attention"
                    } else {
                        "compressed_sparse_attention"
                    })
                })
                .collect(),
        },
    };
    let mlp_types = match present(c, "mlp_layer_types") {
        Some(Json::Array(a)) => a,
        Some(_) => return None,
        None => {
            let hashed = match legacy.n_hash.clone().filter(|v| !v.is_null()) {
                Some(v) => json_u64(&v)? as usize,
                None => 3,
            };
            (0..n)
                .map(|i| json!(if i < hashed { "hash_moe" } else { "moe" }))
                .collect()
        }
    };
    let allowed = |types: &[Json], ok: &[&str]| {
        types.len() >= n
            && types[..n]
                .iter()
                .all(|t| t.as_str().is_some_and(|t| ok.contains(&t)))
    };
    let attention = [
        "sliding_attention",
        "compressed_sparse_attention",
        "heavily_compressed_attention",
    ];
    if !allowed(&layer_types, &attention) || !allowed(&mlp_types, &["hash_moe", "moe"]) {
        return None;
    }
    c.insert("layer_types".into(), Json::Array(layer_types[..n].to_vec()));
    c.insert(
        "mlp_layer_types".into(),
        Json::Array(mlp_types[..n].to_vec()),
    );
    Some(())
}

/// `partial_rotary_factor` (from the legacy `qk_rope_head_dim` when absent), the derived
/// `qk_rope_head_dim`, and the rope settings as a `main` and a `compress` dict.
fn fold_rotary(c: &mut Map<String, Json>, legacy: &Legacy) -> Option<()> {
    let head_dim = match present(c, "head_dim") {
        Some(v) => v.as_f64()?,
        None => 512.0,
    };
    let prf = match present(c, "partial_rotary_factor") {
        Some(v) => v.as_f64()?,
        None => match legacy.qk_rope.clone().filter(|v| !v.is_null()) {
            Some(q) => match q.as_f64() {
                Some(q) if head_dim != 0.0 => q / head_dim,
                _ => return None,
            },
            None => 64.0 / 512.0,
        },
    };
    c.insert("partial_rotary_factor".into(), json!(prf));
    c.insert("qk_rope_head_dim".into(), json!((head_dim * prf) as i64));
    let theta = present(c, "rope_theta").unwrap_or(json!(10000.0));
    c.insert("rope_theta".into(), theta.clone());
    let compress_theta = present(c, "compress_rope_theta").unwrap_or(json!(160000.0));
    let rp = match c.get("rope_parameters").or_else(|| c.get("rope_scaling")) {
        Some(Json::Object(m)) => m.clone(),
        _ => Map::new(),
    };
    let rope = match (rp.get("main"), rp.get("compress")) {
        (Some(m @ Json::Object(_)), Some(k @ Json::Object(_))) => {
            json!({"main": m, "compress": k})
        }
        _ => {
            let mut compress: Map<String, Json> = rp
                .into_iter()
                .filter(|(k, _)| k != "main" && k != "compress")
                .collect();
            compress.insert("rope_theta".into(), compress_theta);
            compress.insert("partial_rotary_factor".into(), json!(prf));
            compress
                .entry("rope_type")
                .or_insert_with(|| json!("default"));
            if compress.get("rope_type") == Some(&json!("yarn")) {
                compress
                    .entry("attention_factor")
                    .or_insert_with(|| json!(1.0));
            }
            json!({
                "main": {"rope_type": "default", "rope_theta": theta, "partial_rotary_factor": prf},
                "compress": compress,
            })
        }
    };
    c.insert("rope_parameters".into(), rope);
    c.remove("rope_scaling");
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_config_class_folds_its_legacy_keys() {
        let mut cfg = json!({
            "num_hidden_layers": 3, "head_dim": 44, "qk_rope_head_dim": 30,
            "compress_ratios": [0, 4, 128, 0], "num_hash_layers": 1, "intermediate_size": 32,
            "rope_scaling": {"type": "yarn", "factor": 4}
        })
        .as_object()
        .unwrap()
        .clone();
        assert!(config_class(&mut cfg));
        // int(44 * (30 / 44)) is 29 in floating point.
        assert_eq!(cfg["qk_rope_head_dim"], json!(29));
        assert_eq!(cfg["moe_intermediate_size"], json!(32));
        assert!(cfg.get("compress_ratios").is_none() && cfg.get("num_hash_layers").is_none());
        assert_eq!(cfg["mlp_layer_types"], json!(["hash_moe", "moe", "moe"]));
        assert_eq!(cfg["rope_parameters"]["compress"]["type"], json!("yarn"));
        let mut bad = json!({"num_hidden_layers": 2, "compress_ratios": [0, 8]})
            .as_object()
            .unwrap()
            .clone();
        let before = bad.clone();
        assert!(!config_class(&mut bad));
        assert_eq!(bad, before);
    }
}
