//! `gguf-inspect diff` shows how metadata values changed readably: scalars as `old -> new`,
//! a multi-line chat template as a unified diff, added and removed keys; the check a user
//! runs after `gguf-edit`.

use ggufkit_testsupport as support;

use std::path::Path;
use std::process::{Command, Output};

use support::*;

const EDIT: &str = env!("CARGO_BIN_EXE_gguf-edit");
const INSPECT: &str = env!("CARGO_BIN_EXE_gguf-inspect");

fn ok(o: Output) -> Output {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    o
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

const TEMPLATE_A: &str = "{% for m in messages %}\n<|{{ m.role }}|>\n{{ m.content }}\n{% endfor %}\n{% if add_generation_prompt %}<|assistant|>{% endif %}\n";
const TEMPLATE_B: &str = "{% for m in messages %}\n<|im_start|>{{ m.role }}\n{{ m.content }}\n{% endfor %}\n{% if add_generation_prompt %}<|assistant|>{% endif %}\n{{ eos_token }}\n";

#[test]
fn diff_shows_value_changes_and_template_diffs() {
    let dir = scratch("inspect-diff");
    let input = support::golden::golden_gguf("llama-spm", "convert-f16");
    let (ta, tb) = (dir.join("a.jinja"), dir.join("b.jinja"));
    std::fs::write(&ta, TEMPLATE_A).unwrap();
    std::fs::write(&tb, TEMPLATE_B).unwrap();
    let (a, b) = (dir.join("a.gguf"), dir.join("b.gguf"));
    ok(Command::new(EDIT)
        .args([s(&input), s(&a), "-q", "--chat-template-file", s(&ta)])
        .output()
        .unwrap());
    ok(Command::new(EDIT)
        .args([s(&a), s(&b), "-q", "--chat-template-file", s(&tb)])
        .args([
            "--general-name",
            "Renamed",
            "--special-token-by-id",
            "eos",
            "5",
        ])
        .args([
            "--set",
            "general.license=str:mit",
            "--remove-metadata",
            "general.size_label",
        ])
        .output()
        .unwrap());
    let o = Command::new(INSPECT)
        .args(["diff", s(&a), s(&b)])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "files differ: exit 1");
    let got = String::from_utf8_lossy(&o.stdout);
    let want = format!(
        "- key general.size_label
+ key general.license
~ key general.name: \"Llama Spm\" -> \"Renamed\"
~ key tokenizer.ggml.eos_token_id: 2 -> 5
~ key tokenizer.chat_template: string of 5 -> 6 lines ({} -> {} characters):
    --- a/tokenizer.chat_template
    +++ b/tokenizer.chat_template
    @@ -1,5 +1,6 @@
     {{% for m in messages %}}
    -<|{{{{ m.role }}}}|>
    +<|im_start|>{{{{ m.role }}}}
     {{{{ m.content }}}}
     {{% endfor %}}
     {{% if add_generation_prompt %}}<|assistant|>{{% endif %}}
    +{{{{ eos_token }}}}
",
        TEMPLATE_A.chars().count(),
        TEMPLATE_B.chars().count()
    );
    assert_eq!(got, want);

    // The same in JSON: each changed key has its summary and diff lines.
    let o = Command::new(INSPECT)
        .args(["diff", "--json", s(&a), s(&b)])
        .output()
        .unwrap();
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let changed = j["keys_changed"].as_array().unwrap();
    let t = changed
        .iter()
        .find(|c| c["key"] == "tokenizer.chat_template")
        .unwrap();
    assert_eq!(t["unified"].as_array().unwrap().len(), 10);
    assert_eq!(changed[0]["summary"], "\"Llama Spm\" -> \"Renamed\"");

    // Identical files: exit 0.
    let o = Command::new(INSPECT)
        .args(["diff", s(&a), s(&a)])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "identical\n");
}
