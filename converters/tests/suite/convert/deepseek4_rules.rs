//! DeepSeek V4 beyond its golden fixture: the `--mtp` draft and `--no-mtp` model against
//! the reference's files (`golden/mtp/cases.json`), and the checkpoints the class refuses
//! (an incomplete expert or routing table, a name outside its map, a tokenizer without a
//! chat template), each refused naming the tensor or file at fault.

use std::path::Path;

use ggufkit_converters::hf::{read_hf_dir, HfOptions, Mtp, OutType};
use ggufkit_converters::ConvertError;
use ggufkit_testsupport::golden::{
    materialize_fixture as materialize, read_json, safetensors, sha256_file,
};
use ggufkit_testsupport::{scratch, testdata, write_gguf, Scratch};
use serde_json::Value as Json;

/// The fixture's tensors: `(name, dtype, shape, bytes)` in file order.
type Tensors = Vec<(String, String, Vec<u64>, Vec<u8>)>;

fn read_tensors(path: &Path) -> Tensors {
    let bytes = std::fs::read(path).unwrap();
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let header: Json = serde_json::from_slice(&bytes[8..8 + n]).unwrap();
    let data = &bytes[8 + n..];
    let mut out: Tensors = Vec::new();
    for (name, t) in header.as_object().unwrap() {
        if name == "__metadata__" {
            continue;
        }
        let off: Vec<usize> = t["data_offsets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap() as usize)
            .collect();
        let shape = t["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap())
            .collect();
        out.push((
            name.clone(),
            t["dtype"].as_str().unwrap().to_string(),
            shape,
            data[off[0]..off[1]].to_vec(),
        ));
    }
    out
}

/// The fixture in a scratch directory with its weights edited by `edit`.
fn edited(tag: &str, edit: impl FnOnce(&mut Tensors)) -> (Scratch, std::path::PathBuf) {
    let work = scratch(tag);
    let dir = materialize("deepseek4", &work);
    let st = dir.join("model.safetensors");
    let mut tensors = read_tensors(&st);
    edit(&mut tensors);
    let list: Vec<(&str, &str, &[u64], Vec<u8>)> = tensors
        .iter()
        .map(|(n, d, s, b)| (n.as_str(), d.as_str(), s.as_slice(), b.clone()))
        .collect();
    std::fs::remove_file(&st).unwrap();
    std::fs::write(&st, safetensors(&list)).unwrap();
    (work, dir)
}

fn convert(
    dir: &Path,
    outtype: OutType,
    mtp: Mtp,
) -> Result<ggufkit_converters::hf::HfConversion, ConvertError> {
    read_hf_dir(
        dir,
        &HfOptions {
            outtype,
            mtp,
            ..HfOptions::default()
        },
    )
}

/// The tensor a `ConvertError::Tensor` names.
fn tensor_of(e: ConvertError) -> String {
    match e {
        ConvertError::Tensor { name, .. } => name,
        other => panic!("not a tensor error: {other}"),
    }
}

#[test]
fn deepseek4_mtp_draft_and_model_equal_the_reference() {
    let cases = read_json(&testdata("golden/mtp/cases.json"));
    let work = scratch("deepseek4-mtp");
    let dir = materialize("deepseek4", &work);
    let mut checked = 0;
    for (mtp, flag) in [(Mtp::Only, "--mtp"), (Mtp::Drop, "--no-mtp")] {
        for t in ["f32", "f16", "bf16", "q8_0"] {
            let case = &cases[format!("deepseek4{flag}-{t}")];
            let want = case["sha256"].as_str().expect("a golden case");
            let conv = convert(&dir, OutType::parse(t).unwrap(), mtp).unwrap();
            let out = work.join(format!("{flag}-{t}.gguf"));
            write_gguf(&conv.model, &out).unwrap();
            assert_eq!(sha256_file(&out), want, "deepseek4 {flag} {t}");
            checked += 1;
        }
    }
    assert_eq!(checked, 8);
}

#[test]
fn deepseek4_refuses_missing_expert_and_routing_tensors() {
    let (_w, dir) = edited("deepseek4-no-scale", |t| {
        t.retain(|x| x.0 != "layers.1.ffn.experts.2.w3.scale")
    });
    let e = convert(&dir, OutType::F32, Mtp::Keep)
        .err()
        .expect("refused");
    assert_eq!(tensor_of(e), "layers.1.ffn.experts.2.w3.weight");

    let (_w, dir) = edited("deepseek4-no-table", |t| {
        t.retain(|x| x.0 != "layers.0.ffn.gate.tid2eid")
    });
    let e = convert(&dir, OutType::F32, Mtp::Keep)
        .err()
        .expect("refused");
    assert_eq!(tensor_of(e), "layers.0.ffn.gate.tid2eid");

    // An expert scale that does not cover its weight's 32-value blocks.
    let (_w, dir) = edited("deepseek4-bad-scale", |t| {
        let s = t
            .iter_mut()
            .find(|x| x.0 == "layers.2.ffn.experts.0.w1.scale")
            .unwrap();
        s.2 = vec![s.2[0] / 2, 2];
    });
    let e = convert(&dir, OutType::F32, Mtp::Keep)
        .err()
        .expect("refused");
    assert_eq!(tensor_of(e), "layers.2.ffn.experts.0.w1.scale");
}

#[test]
fn deepseek4_refuses_names_outside_its_map() {
    let (_w, dir) = edited("deepseek4-unknown", |t| {
        let mut x = t
            .iter()
            .find(|x| x.0 == "layers.0.attn_norm.weight")
            .unwrap()
            .clone();
        x.0 = "layers.0.attn.extra_norm.weight".into();
        t.push(x);
    });
    let e = convert(&dir, OutType::F32, Mtp::Keep)
        .err()
        .expect("refused");
    assert_eq!(tensor_of(e), "layers.0.attn.extra_norm.weight");
    // A scale left over (its weight is not FP8) is not a tensor of the class either.
    let (_w, dir) = edited("deepseek4-bf16-scaled", |t| {
        let w = t
            .iter_mut()
            .find(|x| x.0 == "layers.0.attn.wkv.weight")
            .unwrap();
        w.1 = "BF16".into();
        w.3 = w.3.iter().flat_map(|_| [0u8, 0x3c]).collect();
    });
    let e = convert(&dir, OutType::F32, Mtp::Keep)
        .err()
        .expect("refused");
    assert_eq!(tensor_of(e), "layers.0.attn.wkv.scale");
}

#[test]
fn deepseek4_needs_a_tokenizer_chat_template() {
    let work = scratch("deepseek4-no-template");
    let dir = materialize("deepseek4", &work);
    let tc_path = dir.join("tokenizer_config.json");
    let mut tc: Json = serde_json::from_str(&std::fs::read_to_string(&tc_path).unwrap()).unwrap();
    tc.as_object_mut().unwrap().remove("chat_template");
    std::fs::remove_file(&tc_path).unwrap();
    std::fs::write(&tc_path, tc.to_string()).unwrap();
    match convert(&dir, OutType::F32, Mtp::Keep) {
        Err(ConvertError::Unsupported(why)) => assert!(why.contains("chat template"), "{why}"),
        Err(other) => panic!("refused for another reason: {other}"),
        Ok(_) => panic!("converted without the bundled template"),
    }
    // With a chat_template.jinja beside it the template is the file's.
    std::fs::write(dir.join("chat_template.jinja"), "{{ messages }}").unwrap();
    let conv = convert(&dir, OutType::F32, Mtp::Keep).unwrap();
    let keys: Vec<&str> = conv.model.metadata.iter().map(|(k, _)| k).take(2).collect();
    assert_eq!(keys, ["general.architecture", "tokenizer.chat_template"]);
}
