//! The mixture-of-experts hyperparameters llama.cpp's loader checks before anything else
//! (llama-quantize loads them too, so it stops at the same files).
//!
//! With `E` experts (`{arch}.expert_count`, 0 when absent), `U` the most experts any layer
//! uses (`{arch}.expert_used_count`, a number or one per layer, 0 when absent), `G` expert
//! groups (`{arch}.expert_group_count`) and `Gu` groups used (`{arch}.expert_group_used_count`):
//! `E` ≤ 1024 and `U` ≤ `E`; with experts, `U` > 0 and `G` < `E`, and with more than one
//! group, `G` divides `E` and 0 < `Gu` < `G`; without experts, `U` = 0 and `G` = 0. The
//! Hunyuan dense architectures treat one expert or fewer as none.

use super::loadable::scalar_u64;
use crate::gguf::keys;
use crate::gguf::{ArrayValue, Metadata, Value};

/// Most experts llama.cpp's hyperparameters hold.
pub const MAX_EXPERTS: u64 = 1024;

/// The largest value of a scalar or of an integer array (per-layer values).
fn largest(v: &Value) -> Option<u64> {
    match v {
        Value::Array(ArrayValue::U32(xs)) => Some(xs.iter().copied().max().unwrap_or(0).into()),
        Value::Array(ArrayValue::I32(xs)) => Some(
            xs.iter()
                .map(|&x| u64::try_from(x).unwrap_or(u64::MAX))
                .max()
                .unwrap_or(0),
        ),
        other => scalar_u64(other),
    }
}

/// What llama.cpp's loader refuses in `arch`'s expert hyperparameters.
pub fn expert_problems(md: &Metadata, arch: &str) -> Vec<String> {
    let key = |k: &str| keys::arch_key(arch, k);
    let get = |k: &str| md.get(&key(k)).and_then(largest).unwrap_or(0);
    let mut n = get("expert_count");
    let mut used = get("expert_used_count");
    let groups = get("expert_group_count");
    let groups_used = get("expert_group_used_count");
    if matches!(arch, "hunyuan_vl" | "hunyuan-dense") && n <= 1 {
        (n, used) = (0, 0);
    }
    let (ke, ku, kg, kgu) = (
        key("expert_count"),
        key("expert_used_count"),
        key("expert_group_count"),
        key("expert_group_used_count"),
    );
    let mut out = Vec::new();
    let mut refuse = |s: String| out.push(format!("{s} (llama.cpp's loader stops here)"));
    if n > MAX_EXPERTS {
        refuse(format!("{ke} = {n}: at most {MAX_EXPERTS} experts"));
    }
    if used > n {
        refuse(format!("{ku} = {used} is more than {ke} = {n}"));
    }
    if n > 0 {
        if used == 0 {
            refuse(format!("{ku} is 0 with {ke} = {n}"));
        }
        if groups >= n {
            refuse(format!("{kg} = {groups} is not less than {ke} = {n}"));
        }
        if groups > 1 {
            if n % groups != 0 {
                refuse(format!("{kg} = {groups} does not divide {ke} = {n}"));
            }
            if groups_used == 0 || groups_used >= groups {
                refuse(format!(
                    "{kgu} = {groups_used}: it must be at least 1 and less than {kg} = {groups}"
                ));
            }
        }
    } else if groups != 0 {
        refuse(format!("{kg} = {groups} without experts"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn md(pairs: &[(&str, u32)]) -> Metadata {
        let mut m = Metadata::new();
        for (k, v) in pairs {
            m.set(format!("qwen3moe.{k}"), Value::U32(*v));
        }
        m
    }

    #[test]
    fn the_loaders_expert_checks() {
        let ok = |p: &[(&str, u32)]| expert_problems(&md(p), "qwen3moe").is_empty();
        assert!(ok(&[]));
        assert!(ok(&[("expert_count", 8), ("expert_used_count", 2)]));
        assert!(!ok(&[("expert_count", 4), ("expert_used_count", 9)]));
        assert!(!ok(&[("expert_count", 4), ("expert_used_count", 0)]));
        assert!(!ok(&[("expert_count", 0), ("expert_used_count", 1)]));
        assert!(!ok(&[("expert_count", 2048), ("expert_used_count", 2)]));
        let g = |groups, used| {
            ok(&[
                ("expert_count", 8),
                ("expert_used_count", 2),
                ("expert_group_count", groups),
                ("expert_group_used_count", used),
            ])
        };
        assert!(g(4, 2));
        assert!(!g(3, 1), "3 does not divide 8");
        assert!(!g(4, 4), "topk_group must be below n_group");
        assert!(!g(4, 0));
        assert!(!g(8, 1), "groups must be fewer than experts");
    }

    /// The HunYuan dense and VL loaders read a single expert as none (its used count too).
    #[test]
    fn one_hunyuan_expert_is_none() {
        for arch in ["hunyuan-dense", "hunyuan_vl"] {
            let mut m = Metadata::new();
            m.set(format!("{arch}.expert_count"), Value::U32(1));
            m.set(format!("{arch}.expert_used_count"), Value::U32(0));
            assert!(expert_problems(&m, arch).is_empty(), "{arch}");
        }
        let mut m = Metadata::new();
        m.set("qwen3moe.expert_count".to_string(), Value::U32(1));
        m.set("qwen3moe.expert_used_count".to_string(), Value::U32(0));
        assert!(!expert_problems(&m, "qwen3moe").is_empty());
    }
}
