//! config.json with nested sub-configs (`text_config`, `llm_config`, `lm_config`,
//! `thinker_config.text_config`, `language_config`, `lfm`) built from the input, merged as
//! AutoConfig + TextModel merge them. Beyond "no panic", checks the merge against the
//! reference's rules written out independently here: the sub-config that wins is the last
//! rename present; every key it states is taken as stated; for a text-model class every
//! other non-null root value survives (class defaults never replace a value the file
//! gives); a winning sub-config that is not an object, or a `thinker_config` without a
//! `text_config`, is refused.
#![no_main]

use ggufkit_converters::hf::config::from_json;
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Map, Value as Json};

#[path = "common/bytes.rs"]
mod bytes;
use bytes::Bytes;

const KEYS: &[&str] = &[
    "num_hidden_layers",
    "hidden_size",
    "vocab_size",
    "rms_norm_eps",
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "intermediate_size",
    "rope_theta",
    "max_position_embeddings",
    "model_type",
    "architectures",
    "rope_parameters",
    "n_layer",
];

fn value(d: &mut Bytes) -> Json {
    match d.u8() % 10 {
        0 => Json::Null,
        1 => json!(d.u8()),
        2 => json!(u64::from(d.u8()) << 40),
        3 => json!(f64::from(d.u8()) * 1e300),
        4 => json!(1e-6),
        5 => {
            let t = ["qwen2", "llama", "gemma3_text", "x"][(d.u8() % 4) as usize];
            json!(t)
        }
        6 => {
            let a = ["Qwen2ForCausalLM", "LlamaForCausalLM", "Gemma3ForCausalLM"][(d.u8() % 3) as usize];
            json!([a])
        }
        7 => json!({"rope_theta": 10000.0, "rope_type": "default"}),
        8 => json!(-1),
        _ => json!(true),
    }
}

fn object(d: &mut Bytes) -> Map<String, Json> {
    let mut m = Map::new();
    for _ in 0..(d.u8() % 6) {
        let k = KEYS[(d.u8() as usize) % KEYS.len()];
        m.insert(k.to_string(), value(d));
    }
    m
}

fn sub(d: &mut Bytes) -> Json {
    match d.u8() % 8 {
        0 => Json::Null,
        1 => json!("x"),
        2 => json!([1]),
        3 => json!({}),
        _ => Json::Object(object(d)),
    }
}

const RENAMES: [&str; 5] = ["llm_config", "lm_config", "thinker_config", "language_config", "lfm"];

fuzz_target!(|data: &[u8]| {
    let mut d = Bytes(data);
    let mut root = object(&mut d);
    let top = ["qwen2", "llama", "mistral", "gemma2", "gpt2", "bert", "fancy", "gemma3", "llava"]
        [(d.u8() % 9) as usize];
    if d.u8() % 4 != 0 {
        root.insert("model_type".into(), json!(top));
    }
    if d.u8() % 4 != 0 {
        root.insert("architectures".into(), json!(["Qwen2ForCausalLM"]));
    }
    for k in ["text_config"].iter().chain(RENAMES.iter()) {
        if d.u8() % 3 == 0 {
            let v = if *k == "thinker_config" && d.u8() % 2 == 0 {
                json!({"text_config": sub(&mut d)})
            } else {
                sub(&mut d)
            };
            root.insert(k.to_string(), v);
        }
    }
    let raw = Json::Object(root.clone());
    let result = from_json(raw, "config.json".into());

    // The reference's rules, independently.
    let composite = matches!(
        root.get("model_type").and_then(Json::as_str),
        Some("gemma3" | "llava")
    );
    let mut winner: Option<Result<Json, ()>> = root.get("text_config").cloned().map(Ok);
    // (A composite class given a non-object text_config fails AutoConfig: the reference
    // then reads config.json as written, and that value stays.)
    if composite && matches!(winner, None | Some(Ok(Json::Null))) {
        winner = Some(Ok(json!({})));
    }
    // A thinker_config without a text_config fails the reference there and then (a later
    // rename does not save it).
    let mut thinker_fails = false;
    for k in RENAMES {
        if let Some(v) = root.get(k) {
            thinker_fails |= k == "thinker_config" && v.get("text_config").is_none();
            winner = Some(if k == "thinker_config" {
                v.get("text_config").cloned().ok_or(())
            } else {
                Ok(v.clone())
            });
        }
    }
    let must_fail = thinker_fails
        || match &winner {
            Some(Err(())) => true,
            Some(Ok(v)) => !v.is_object(),
            None => false,
        };
    let arch_known = root.get("architectures").and_then(|a| a.get(0)).is_some_and(Json::is_string)
        || matches!(&winner, Some(Ok(Json::Object(t)))
            if t.get("architectures").and_then(|a| a.get(0)).is_some_and(Json::is_string));
    match result {
        Err(_) => assert!(must_fail || !arch_known, "refused: {root:?}"),
        Ok(h) => {
            assert!(!must_fail, "accepted: {root:?}");
            let stated = match &winner {
                Some(Ok(Json::Object(t))) => t.clone(),
                _ => Map::new(),
            };
            for (k, v) in &stated {
                // A typed sub-config fills a null head_dim / num_key_value_heads.
                if composite && v.is_null() {
                    continue;
                }
                assert_eq!(h.map.get(k), Some(v), "sub-config key {k}: {root:?}");
            }
            if !composite {
                for (k, v) in &root {
                    // transformers 5 puts the default theta into a rope_parameters dict.
                    // (text_config itself is what the last rename replaces.)
                    if stated.contains_key(k)
                        || v.is_null()
                        || k == "rope_parameters"
                        || k == "text_config"
                    {
                        continue;
                    }
                    assert_eq!(h.map.get(k), Some(v), "root key {k}: {root:?}");
                }
            }
            let _ = h.block_count();
            let _ = h.find_f64(&["rms_norm_eps"]);
        }
    }
});
