//! `tokenizer.ggml.pre`: which llama.cpp pre-tokenizer a BPE (or WordPiece) vocabulary needs.
//!
//! First llama.cpp's own mechanism (`get_vocab_base_pre`): encode a fixed
//! text with the HuggingFace tokenizer (special tokens included), hash the decimal list of ids
//! and look the sha256 up in llama.cpp's table, the last matching row winning. The encoding is
//! done by HuggingFace's own `tokenizers` crate on tokenizer.json (truncation and padding off,
//! as `transformers` calls it).
//!
//! A fine-tuned or retrained vocabulary changes the ids and so the hash, although its
//! pre-tokenizer is the same. Then the structure of tokenizer.json decides: its pre-tokenizer
//! steps (the `Split` regexes, `ByteLevel`, `Digits`, `Punctuation`, `BertPreTokenizer`)
//! are compared with the pipelines of the model families llama.cpp knows
//! ([`STRUCTURE_RULES`]); a few rules choose between names whose regexes are the same in
//! llama.cpp but whose other flags differ, from facts llama.cpp's flags mirror
//! (`model.ignore_merges`, `clean_up_tokenization_spaces`, a Roberta post-processor).

use serde_json::Value as Json;
use sha2::{Digest, Sha256};

use super::kv::key;
use crate::ConvertError;

/// The text llama.cpp encodes (`chktxt`): 350 code points, 431 UTF-8 bytes, sha256
/// `a36179c1…526da`.
pub const CHKTXT: &str = "\n \n\n \n\n\n \t \t\t \t\n  \n   \n    \n     \n\u{1f680} (normal) \
\u{1f636}\u{200d}\u{1f32b}\u{fe0f} (multiple emojis concatenated) \u{2705} \u{1f999}\u{1f999} 3 33 333 \
3333 33333 333333 3333333 33333333 3.3 3..3 3...3 \u{1780}\u{17b6}\u{1793}\u{17cb}\u{178f}\u{17c2}\
\u{1796}\u{17b7}\u{179f}\u{17c1}\u{179f}\u{17a2}\u{17b6}\u{1785}\u{1f601} ?\u{6211}\u{60f3}\u{5728}apple\
\u{5de5}\u{4f5c}1314151\u{5929}\u{ff5e} ------======= \u{43d}\u{435}\u{449}\u{43e} \u{43d}\u{430} \
\u{411}\u{44a}\u{43b}\u{433}\u{430}\u{440}\u{441}\u{43a}\u{438} ''''''```````\"\"\"\"......!!!!!!?????? \
I've been 'told he's there, 'RE you sure? 'M not sure I'll make it, 'D you like some tea? We'Ve a'lL";

/// How [`detect_pre_tokenizer`](super::detect_pre_tokenizer) found the name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PreTokenizerHow {
    /// The chkhsh is in llama.cpp's table (what llama.cpp's converter writes).
    Hash,
    /// The chkhsh is unknown; the tokenizer.json pipeline matched a structure rule.
    Structure {
        /// The rule's id (see [`STRUCTURE_RULES`]).
        rule: &'static str,
        /// What the rule checks, in words.
        description: &'static str,
    },
}

/// The detected `tokenizer.ggml.pre`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreTokenizerMatch {
    /// The value for `tokenizer.ggml.pre`.
    pub name: String,
    /// How it was found.
    pub how: PreTokenizerHow,
    /// The chkhsh of this tokenizer (hex sha256), matched or not.
    pub chkhsh: String,
}

impl std::fmt::Display for PreTokenizerMatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.how {
            PreTokenizerHow::Hash => write!(f, "{} (chkhsh {})", self.name, self.chkhsh),
            PreTokenizerHow::Structure { rule, description } => write!(
                f,
                "{} (chkhsh {} unknown; structure rule '{rule}': {description})",
                self.name, self.chkhsh
            ),
        }
    }
}

/// llama.cpp's chkhsh table (`conversion/base.py` @ 0c1e570, file order; where a hash occurs
/// twice the later row wins).
pub(crate) const CHKHSH_TABLE: [(&str, &str); 97] = [
    (
        "b6e8e1518dc4305be2fe39c313ed643381c4da5db34a98f6a04c093f8afbe99b",
        "chatglm-bpe",
    ),
    (
        "81d72c7348a9f0ebe86f23298d37debe0a5e71149e29bd283904c02262b27516",
        "chatglm-bpe",
    ),
    (
        "a1336059768a55c99a734006ffb02203cd450fed003e9a71886c88acf24fdbc2",
        "glm4",
    ),
    (
        "9ca2dd618e8afaf09731a7cf6e2105b373ba6a1821559f258b272fe83e6eb902",
        "glm4",
    ),
    (
        "cdf5f35325780597efd76153d4d1c16778f766173908894c04afc20108536267",
        "glm4",
    ),
    (
        "1431a23e583c97432bc230bff598d103ddb5a1f89960c8f1d1051aaa944d0b35",
        "minerva-7b",
    ),
    (
        "7e57df22b1fe23a7b1e1c7f3dc4e3f96d43a4eb0836d0c6bdc3436d7b2f1c664",
        "hunyuan",
    ),
    (
        "bba3b3366b646dbdded5dbc42d59598b849371afc42f7beafa914afaa5b70aa6",
        "hunyuan-dense",
    ),
    (
        "e6ddf9c6686791c12d698d34c31ab9be1fea9af5a3d9a6909783ab382198ae1c",
        "hy_v4",
    ),
    (
        "a6b57017d60e6edb4d88ecc2845188e0eb333a70357e45dcc9b53964a73bbae6",
        "falcon-h1",
    ),
    (
        "60476e1243776c4fb1b993dbd7a5f15ac22f83c80afdf425fa5ae01c8d44ef86",
        "falcon-h1",
    ),
    (
        "3eda48b4c4dc7de733d1a8b3e3b4a85243dbbf704da2ee9d42c6beced8897896",
        "falcon-h1",
    ),
    (
        "48f8e02c0359c0bbdd82f26909171fac1c18a457bb47573ed1fe3bbb2c1cfd4b",
        "falcon-h1",
    ),
    (
        "81212dc7cdb7e0c1074ca62c5aeab0d43c9f52b8a737be7b12a777c953027890",
        "kimi-k2",
    ),
    (
        "d4540891389ea895b53b399da6ac824becc30f2fba0e9ddbb98f92e55ca0e97c",
        "qwen2",
    ),
    (
        "1444df51289cfa8063b96f0e62b1125440111bc79a52003ea14b6eac7016fd5f",
        "qwen35",
    ),
    (
        "66b8d4e19ab16c3bfd89bce5d785fb7e0155e8648708a1f42077cb9fe002c273",
        "grok-2",
    ),
    (
        "b3d1dd861f1d4c5c0d2569ce36baf3f90fe8a102db3de50dd71ff860d91be3df",
        "jina-v2-de",
    ),
    (
        "0fe1cf6eda062318a1af7270f3331a85c539a01778ff948e24388e949c5282f4",
        "gpt-2",
    ),
    (
        "9e454714343b69b99b71795c1d27a68c2a1d15dab111f4d353109f966af29da7",
        "lfm2",
    ),
    (
        "846deafc5b0fa786186fa4ae6c7b49903cf2f1d1895bdb80b9120d60be135252",
        "gemma4",
    ),
    (
        "0a766d034107bc736a3f2dc4968fd62e54a3570f1454443e0c5a4cc6bd7941ed",
        "spark2_5",
    ),
    (
        "0ef9807a4087ebef797fc749390439009c3b9eda9ad1a097abbe738f486c01e5",
        "llama-bpe",
    ),
    (
        "049ecf7629871e3041641907f3de7c733e4dbfdc736f57d882ba0b0845599754",
        "deepseek-llm",
    ),
    (
        "347715f544604f9118bb75ed199f68779f423cabb20db6de6f31b908d04d7821",
        "deepseek-coder",
    ),
    (
        "8aeee3860c56296a157a1fe2fad249ec40aa59b1bb5709f4ade11c4e6fe652ed",
        "falcon",
    ),
    (
        "0876d13b50744004aa9aeae05e7b0647eac9d801b5ba4668afc01e709c15e19f",
        "bert-bge",
    ),
    (
        "9d032fcbd5501f4a38150912590928bfb36091efb5df11b8e2124b0390e3fb1e",
        "falcon3",
    ),
    (
        "8e62295832751ca1e8f92f2226f403dea30dc5165e448b5bfa05af5340c64ec7",
        "bert-bge-large",
    ),
    (
        "b6dc8df998e1cfbdc4eac8243701a65afe638679230920b50d6f17d81c098166",
        "mpt",
    ),
    (
        "35d91631860c815f952d711435f48d356ebac988362536bed955d43bfa436e34",
        "starcoder",
    ),
    (
        "3ce83efda5659b07b1ad37ca97ca5797ea4285d9b9ab0dc679e4a720c9da7454",
        "gpt-2",
    ),
    (
        "32d85c31273f8019248f2559fed492d929ea28b17e51d81d3bb36fff23ca72b3",
        "stablelm2",
    ),
    (
        "6221ad2852e85ce96f791f476e0b390cf9b474c9e3d1362f53a24a06dc8220ff",
        "refact",
    ),
    (
        "9c2227e4dd922002fb81bde4fc02b0483ca4f12911410dee2255e4987644e3f8",
        "command-r",
    ),
    (
        "d772b220ace2baec124bed8cfafce0ead7d6c38a4b65ef11261cf9d5d62246d1",
        "tiny_aya",
    ),
    (
        "52df12b4c8d4176e7481aab4b6e8454d1fd0a210a04a574f6d4e067d10e23c3e",
        "cohere2moe",
    ),
    (
        "e636dc30a262dcc0d8c323492e32ae2b70728f4df7dfe9737d9f920a282b8aea",
        "qwen2",
    ),
    (
        "b6dc8df998e1cfbdc4eac8243701a65afe638679230920b50d6f17d81c098166",
        "olmo",
    ),
    (
        "a8594e3edff7c29c003940395316294b2c623e09894deebbc65f33f1515df79e",
        "dbrx",
    ),
    (
        "c7699093ba4255a91e702aa38a596aa81669f3525dae06c2953267dde580f448",
        "jina-v1-en",
    ),
    (
        "0876d13b50744004aa9aeae05e7b0647eac9d801b5ba4668afc01e709c15e19f",
        "jina-v2-en",
    ),
    (
        "171aeeedd6fb548d418a7461d053f11b6f1f1fc9b387bd66640d28a4b9f5c643",
        "jina-v2-es",
    ),
    (
        "27949a2493fc4a9f53f5b9b029c82689cfbe5d3a1929bb25e043089e28466de6",
        "jina-v2-de",
    ),
    (
        "a023e9fdc5a11f034d3ef515b92350e56fb2af1f66c6b6811a4444ea9bf8763d",
        "jina-v5-nano",
    ),
    (
        "c136ed14d01c2745d4f60a9596ae66800e2b61fa45643e72436041855ad4089d",
        "smaug-bpe",
    ),
    (
        "c7ea5862a53e4272c035c8238367063e2b270d51faa48c0f09e9d5b54746c360",
        "poro-chat",
    ),
    (
        "7967bfa498ade6b757b064f31e964dddbb80f8f9a4d68d4ba7998fcf281c531a",
        "jina-v2-code",
    ),
    (
        "7fc505bd3104ca1083b150b17d088b59534ede9bde81f0dd2090967d7fe52cee",
        "viking",
    ),
    (
        "b53802fb28e26d645c3a310b34bfe07da813026ec7c7716883404d5e0f8b1901",
        "jais",
    ),
    (
        "bc5108ee1eb6a3d600cadd065f63190fbd0554dbc9e4bbd6a0d977970afc8d2a",
        "jais-2",
    ),
    (
        "7b3e7548e4308f52a76e8229e4e6cc831195d0d1df43aed21ac6c93da05fec5f",
        "codeshell",
    ),
    (
        "63b97e4253352e6f357cc59ea5b583e3a680eaeaf2632188c2b952de2588485e",
        "tekken",
    ),
    (
        "855059429035d75a914d1eda9f10a876752e281a054a7a3d421ef0533e5b6249",
        "smollm",
    ),
    (
        "3c30d3ad1d6b64202cd222813e7736c2db6e1bd6d67197090fc1211fbc612ae7",
        "bloom",
    ),
    (
        "bc01ce58980e1db43859146dc51b1758b3b88729b217a74792e9f8d43e479d21",
        "gpt3-finnish",
    ),
    (
        "4e2b24cc4770243d65a2c9ec19770a72f08cffc161adbb73fcbb6b7dd45a0aae",
        "exaone",
    ),
    (
        "fcace8b9cac38ce847670c970cd5892031a753a1ef381abd1d9af00f713da085",
        "phi-2",
    ),
    (
        "60824e3c0d9401f89943cbb2fff727f0e2d4c545ba4df2d6e4f09a6db0f5b450",
        "chameleon",
    ),
    (
        "8b5a93ed704057481f240da0be7e7dca721d7f8f4755263b6807227a2cbeae65",
        "roberta-bpe",
    ),
    (
        "ad851be1dba641f2e3711822f816db2c265f788b37c63b4e1aeacb9ee92de8eb",
        "gigachat",
    ),
    (
        "d4c8f286ea6b520b3d495c4455483cfa2302c0cfcd4be05d781b6a8a0a7cdaf1",
        "megrez",
    ),
    (
        "877081d19cf6996e2c4ff0e1236341e9b7bde288f5311a56a937f0afbbb3aeb5",
        "deepseek-v3",
    ),
    (
        "b3f499bb4255f8ca19fccd664443283318f2fd2414d5e0b040fbdd0cc195d6c5",
        "deepseek-r1-qwen",
    ),
    (
        "ccc2ef013c104be7bae2965776d611e1d7a8a2a9c547dd93a682c9a9fc80352e",
        "gpt-4o",
    ),
    (
        "7dec86086fcc38b66b7bc1575a160ae21cf705be7718b9d5598190d7c12db76f",
        "superbpe",
    ),
    (
        "1994ffd01900cfb37395608534236ecd63f2bd5995d6cb1004dda1af50240f15",
        "trillion",
    ),
    (
        "96a5f08be6259352137b512d4157e333e21df7edd3fcd152990608735a65b224",
        "bailingmoe",
    ),
    (
        "d353350c764d8c3b39c763113960e4fb4919bea5fbf208a0e3b22e8469dc7406",
        "llama4",
    ),
    (
        "0e9433cbbb161f89e264eb32e8e64bfe69e834973ffca5d41d3948a604a3e2a3",
        "pixtral",
    ),
    (
        "d5f1dd6f980fec569fb218a81a7658ac45fc56b38c5a0adeb1c232fbe04ef5ec",
        "seed-coder",
    ),
    (
        "b0a6b1c0bd5998ebd9df08611efde34a4ff03faed45ae09c43e6b31ebd4b94cf",
        "a.x-4.0",
    ),
    (
        "f6791d196f87ce6b56a7d234be618e0d58f8cda3549416635b2bebcd22cd95c4",
        "midm-2.0",
    ),
    (
        "169bf0296a13c4d9b7672313f749eb36501d931022de052aad6e36f2bf34dd51",
        "lfm2",
    ),
    (
        "2085e1638f6c377a0aa4ead21b27bb4cb941bf800df86ed391011769c1758dfb",
        "exaone4",
    ),
    (
        "a1e163ecab2e718a4c829d1148b6e86824ec36163bb71941c3dca9cd5ac25756",
        "mellum",
    ),
    (
        "a0b64b4385f123663873756336c085744376d015ff328bb1d901598f63c44152",
        "modern-bert",
    ),
    (
        "49fc0303c9e0d2c2c565c510f64b2d9b271276acdcdadff733249eda9f7d59df",
        "afmoe",
    ),
    (
        "9b1be57e70d20d9501b2b3186e792d81181ae36ada3903c26f9fea418cf87206",
        "bailingmoe2",
    ),
    (
        "53e325976a6e142379c19b09afcae354f2f496f147afa8f9e189a33fe4e3024e",
        "granite-docling",
    ),
    (
        "f4f37b6c8eb9ea29b3eac6bb8c8487c5ab7885f8d8022e67edc1c68ce8403e95",
        "minimax-m2",
    ),
    (
        "4a2e2abae11ca2b86d570fc5b44be4d5eb5e72cc8f22dd136a94b37da83ab665",
        "kormo",
    ),
    (
        "9d70134b369a70e5735009b6de918f7581b5211f7c074d1f89f753aea8248af1",
        "youtu",
    ),
    (
        "16389f0a1f51ee53e562ffd51c371dc508639ab0e4261502071836e50e223e91",
        "solar-open",
    ),
    (
        "6c81ce329e0802883b22eabab0d3fa48357337ef1ecb45443828bf1f6254833f",
        "exaone-moe",
    ),
    (
        "d30d75d9059f1aa2c19359de71047b3ae408c70875e8a3ccf8c5fba56c9d8af4",
        "qwen35",
    ),
    (
        "b4b8ca1f9769494fbd956ebc4c249de6131fb277a4a3345a7a92c7dd7a55808d",
        "joyai-llm",
    ),
    (
        "e4d54df1ebc1f2b91acd986c5b51aa50837d5faf7c7398e73c1f9e9ee5d19869",
        "kanana2",
    ),
    (
        "862f827721df956049dff5ca81a57f29e575280bc622e290d3bf4e35eca29015",
        "f2llmv2",
    ),
    (
        "62f6fb0a6fd5098caeabb19b07a5c1099cafc8b9c40eab6ea89ece4ec02fbc57",
        "sarvam-moe",
    ),
    (
        "f728162c1315c26e40249849799b4ba3fe584c32084b4795b03eb295e63cb5af",
        "talkie",
    ),
    (
        "36f3066e97b7f3994b379aaacde306c1444c6ae84e81a5ae3cd2b7ed3b8c42d4",
        "minicpm5",
    ),
    (
        "f241072145675bf8322086f115aebad05e9f869557a238bf2150a2a417d1bf60",
        "granite-embed-multi-97m",
    ),
    (
        "789696f5946cc0fc59371f39f6097cafed196b3acded6140432f26bbb1ae1669",
        "granite-embed-multi-311m",
    ),
    (
        "9dcf830ee9990cdbf78cc523a5f7bd9ad8f3f9890c2d3581d2785ad10f07049d",
        "mellum2",
    ),
    (
        "972da7b59cec44d1f0a490a86c96df53859e486e481563e5dddac155013d87ac",
        "laguna",
    ),
    (
        "653660222fb704f61cbf2b618a8ae6502b7f8b20c980f9a5de07ed78e13319cd",
        "ufakzeka",
    ),
];

/// The table lookup: the last row with this hash.
pub fn name_for_chkhsh(chkhsh: &str) -> Option<&'static str> {
    CHKHSH_TABLE
        .iter()
        .rev()
        .find(|(h, _)| *h == chkhsh)
        .map(|(_, n)| *n)
}

/// The chkhsh of a list of token ids: sha256 of Python's `str(list)` ("[1, 2, 3]").
pub fn chkhsh_of_ids(ids: &[u32]) -> String {
    let mut s = String::with_capacity(ids.len() * 7 + 2);
    s.push('[');
    for (i, id) in ids.iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        s.push_str(&id.to_string());
    }
    s.push(']');
    hex(&Sha256::digest(s.as_bytes()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The chkhsh a tokenizer gives (CHKTXT encoded with special tokens).
pub(crate) fn chkhsh(
    tok: &tokenizers::Tokenizer,
    source: &std::path::Path,
) -> Result<String, ConvertError> {
    super::guard::shield(source, "encoding the probe text", || {
        let enc = tok.encode(CHKTXT, true).map_err(|e| {
            ConvertError::Other(format!("tokenizer could not encode the probe text: {e}"))
        })?;
        Ok(chkhsh_of_ids(enc.get_ids()))
    })
}

/// One step of a tokenizer.json pre-tokenizer, reduced to what decides the splitting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Step {
    /// `Split` (pattern, whether it is a regex, behavior, invert).
    Split(String, bool, String, bool),
    /// `ByteLevel` (add_prefix_space, use_regex).
    ByteLevel(bool, bool),
    /// `Digits` (individual_digits).
    Digits(bool),
    /// `Punctuation` (behavior).
    Punctuation(String),
    /// `BertPreTokenizer`.
    Bert,
    /// Any other type, by name (with its JSON, for the error message).
    Other(String),
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Step::Split(p, regex, b, inv) => write!(
                f,
                "Split({}{p:?}, {b}{})",
                if *regex { "Regex " } else { "String " },
                if *inv { ", inverted" } else { "" }
            ),
            Step::ByteLevel(prefix, regex) => write!(
                f,
                "ByteLevel(use_regex={regex}{})",
                if *prefix { ", add_prefix_space" } else { "" }
            ),
            Step::Digits(ind) => write!(f, "Digits(individual_digits={ind})"),
            Step::Punctuation(b) => write!(f, "Punctuation({b})"),
            Step::Bert => f.write_str("BertPreTokenizer"),
            Step::Other(s) => f.write_str(s),
        }
    }
}

/// Flattens a pre-tokenizer (Sequences inlined) into steps.
pub(crate) fn steps(pre: &Json, out: &mut Vec<Step>) {
    let s = |k: &str| pre.get(k).and_then(Json::as_str).unwrap_or("").to_string();
    let b = |k: &str, d: bool| pre.get(k).and_then(Json::as_bool).unwrap_or(d);
    match pre.get("type").and_then(Json::as_str) {
        Some("Sequence") => {
            for p in pre
                .get("pretokenizers")
                .and_then(Json::as_array)
                .into_iter()
                .flatten()
            {
                steps(p, out);
            }
        }
        Some("Split") => {
            let pat = pre.get("pattern");
            let (text, regex) = match (
                pat.and_then(|p| p.get("Regex")).and_then(Json::as_str),
                pat.and_then(|p| p.get("String")).and_then(Json::as_str),
            ) {
                (Some(r), _) => (r.to_string(), true),
                (None, Some(t)) => (t.to_string(), false),
                _ => (String::new(), false),
            };
            out.push(Step::Split(text, regex, s("behavior"), b("invert", false)));
        }
        Some("ByteLevel") => out.push(Step::ByteLevel(
            b("add_prefix_space", true),
            b("use_regex", true),
        )),
        Some("Digits") => out.push(Step::Digits(b("individual_digits", false))),
        Some("Punctuation") => out.push(Step::Punctuation(s("behavior"))),
        Some("BertPreTokenizer") => out.push(Step::Bert),
        Some(other) => out.push(Step::Other(format!("{other} {pre}"))),
        None if pre.is_null() => {}
        None => out.push(Step::Other(format!("untyped {pre}"))),
    }
}

/// What a step of a rule must be.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Pat {
    /// An isolated, non-inverted `Split` on exactly this regex.
    Split(&'static str),
    /// `ByteLevel` without a prefix space, with this `use_regex`.
    ByteLevel(bool),
    /// `Digits` with this `individual_digits`.
    Digits(bool),
    /// `Punctuation` with contiguous behavior.
    Punctuation,
    /// `BertPreTokenizer`.
    Bert,
}

impl Pat {
    fn matches(self, s: &Step) -> bool {
        match (self, s) {
            (Pat::Split(p), Step::Split(text, true, behavior, false)) => {
                same_regex(text, p) && behavior == "Isolated"
            }
            (Pat::ByteLevel(r), Step::ByteLevel(false, use_regex)) => r == *use_regex,
            (Pat::Digits(i), Step::Digits(ind)) => i == *ind,
            (Pat::Punctuation, Step::Punctuation(b)) => b == "Contiguous",
            (Pat::Bert, Step::Bert) => true,
            _ => false,
        }
    }
}

/// Regex equality up to the spelling of CR and LF: tokenizer.json files write them either as
/// the characters themselves or as the escapes `\r`, `\n`, which match the same text.
fn same_regex(a: &str, b: &str) -> bool {
    let canon = |s: &str| s.replace('\r', "\\r").replace('\n', "\\n");
    a == b || canon(a) == canon(b)
}

/// What else a rule may look at.
#[derive(Debug, Clone, Default)]
pub(crate) struct Facts {
    /// tokenizer.json `model.type`.
    pub model_type: Option<String>,
    /// tokenizer.json `model.ignore_merges`.
    pub ignore_merges: bool,
    /// tokenizer_config.json `clean_up_tokenization_spaces` (None when absent).
    pub clean_up_spaces: Option<bool>,
    /// The post-processor types (a Sequence flattened).
    pub post_processors: Vec<String>,
}

/// One structure rule: the pre-tokenizer steps of a model family, and the name it gets.
pub struct StructureRule {
    /// Short id, reported in [`PreTokenizerHow::Structure`].
    pub id: &'static str,
    /// What it checks and why the name, in words.
    pub description: &'static str,
    pub(crate) steps: &'static [Pat],
    pub(crate) pick: fn(&Facts) -> Option<&'static str>,
}

impl std::fmt::Debug for StructureRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StructureRule")
            .field("id", &self.id)
            .finish()
    }
}

/// Llama-3 / cl100k regex (as tokenizer.json states it; llama.cpp's LLAMA3 pre-type).
const RE_LLAMA3: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
/// Qwen2 regex (single digits).
pub(crate) const RE_QWEN2: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
/// Qwen3.5 regex (marks join letters).
pub(crate) const RE_QWEN35: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
/// o200k regex (GPT-4o, Llama 4).
const RE_GPT4O: &str = r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+";
/// Mistral Tekken regex.
const RE_TEKKEN: &str = r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+";
/// Tiny Aya's digit grouping.
const RE_AYA_DIGITS: &str = r"\d{1,3}(?=(?:\d{3})*\b)";
/// DeepSeek-V3's three splits.
const RE_DSV3_DIGITS: &str = r"\p{N}{1,3}";
const RE_DSV3_CJK: &str = "[\u{4e00}-\u{9fa5}\u{3040}-\u{309f}\u{30a0}-\u{30ff}]+";
const RE_DSV3_MAIN: &str = r##"[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"##;
/// DeepSeek-Coder's splits.
const RE_DSC_NEWLINE: &str = "[\r\n]";
const RE_DSC_LETTERS: &str = r"\s?\p{L}+";
const RE_DSC_PUNCT: &str = r"\s?\p{P}+";
const RE_DSC_CJK: &str = "[\u{4e00}-\u{9fa5}\u{0800}-\u{4e00}\u{ac00}-\u{d7ff}]+";

/// The structure rules, tried in order; the first whose steps match and whose pick gives a
/// name wins.
pub static STRUCTURE_RULES: &[StructureRule] = &[
    StructureRule {
        id: "gpt2-bytelevel",
        description: "ByteLevel with its built-in GPT-2 regex and nothing else: 'gpt-2' \
                      ('roberta-bpe' with a RobertaProcessing post-processor, which llama.cpp \
                      gives add_sep)",
        steps: &[Pat::ByteLevel(true)],
        pick: |f| {
            Some(
                if f.post_processors.iter().any(|p| p == "RobertaProcessing") {
                    "roberta-bpe"
                } else {
                    "gpt-2"
                },
            )
        },
    },
    StructureRule {
        id: "digits-bytelevel",
        description: "Digits(individual) then ByteLevel with the GPT-2 regex (StarCoder/SmolLM \
                      family): 'smollm' (llama.cpp: clean_spaces off) unless \
                      clean_up_tokenization_spaces is true, then 'starcoder'",
        steps: &[Pat::Digits(true), Pat::ByteLevel(true)],
        pick: |f| {
            Some(if f.clean_up_spaces == Some(true) {
                "starcoder"
            } else {
                "smollm"
            })
        },
    },
    StructureRule {
        id: "llama3-split",
        description: "Split on the Llama-3/cl100k regex (\\p{N}{1,3}) then ByteLevel: \
                      'llama-bpe' when model.ignore_merges is set (llama.cpp's LLAMA3 \
                      pre-type ignores merges), else 'dbrx' (same regex, merges used)",
        steps: &[Pat::Split(RE_LLAMA3), Pat::ByteLevel(false)],
        pick: |f| Some(if f.ignore_merges { "llama-bpe" } else { "dbrx" }),
    },
    StructureRule {
        id: "qwen2-split",
        description: "Split on the Qwen2 regex (single \\p{N}) then ByteLevel: 'qwen2'",
        steps: &[Pat::Split(RE_QWEN2), Pat::ByteLevel(false)],
        pick: |_| Some("qwen2"),
    },
    StructureRule {
        id: "qwen35-split",
        description: "Split on the Qwen3.5 regex ([\\p{L}\\p{M}]+) then ByteLevel: 'qwen35'",
        steps: &[Pat::Split(RE_QWEN35), Pat::ByteLevel(false)],
        pick: |_| Some("qwen35"),
    },
    StructureRule {
        id: "o200k-split",
        description: "Split on the GPT-4o/o200k regex then ByteLevel: 'gpt-4o'",
        steps: &[Pat::Split(RE_GPT4O), Pat::ByteLevel(false)],
        pick: |_| Some("gpt-4o"),
    },
    StructureRule {
        id: "tekken-split",
        description: "Split on Mistral's Tekken regex then ByteLevel: 'tekken'",
        steps: &[Pat::Split(RE_TEKKEN), Pat::ByteLevel(false)],
        pick: |_| Some("tekken"),
    },
    StructureRule {
        id: "aya-split",
        description: "Split on 3-digit groups then the o200k-style regex then ByteLevel: \
                      'tiny_aya'",
        steps: &[
            Pat::Split(RE_AYA_DIGITS),
            Pat::Split(RE_GPT4O),
            Pat::ByteLevel(false),
        ],
        pick: |_| Some("tiny_aya"),
    },
    StructureRule {
        id: "deepseek-v3-split",
        description: "Splits on \\p{N}{1,3}, CJK/kana runs and DeepSeek-V3's main regex, then \
                      ByteLevel: 'deepseek-v3'",
        steps: &[
            Pat::Split(RE_DSV3_DIGITS),
            Pat::Split(RE_DSV3_CJK),
            Pat::Split(RE_DSV3_MAIN),
            Pat::ByteLevel(false),
        ],
        pick: |_| Some("deepseek-v3"),
    },
    StructureRule {
        id: "deepseek-coder-split",
        description: "Splits on newlines, letters, punctuation and CJK runs, Digits(individual), \
                      ByteLevel: 'deepseek-coder'",
        steps: &[
            Pat::Split(RE_DSC_NEWLINE),
            Pat::Split(RE_DSC_LETTERS),
            Pat::Split(RE_DSC_PUNCT),
            Pat::Split(RE_DSC_CJK),
            Pat::Digits(true),
            Pat::ByteLevel(false),
        ],
        pick: |_| Some("deepseek-coder"),
    },
    StructureRule {
        id: "falcon",
        description: "Punctuation(contiguous), ByteLevel with the GPT-2 regex, Digits, Split on \
                      three digits: 'falcon'",
        steps: &[
            Pat::Punctuation,
            Pat::ByteLevel(true),
            Pat::Digits(false),
            Pat::Split("[0-9][0-9][0-9]"),
        ],
        pick: |_| Some("falcon"),
    },
    StructureRule {
        id: "bert-wordpiece",
        description: "BertPreTokenizer with a WordPiece model: 'jina-v2-en' (what llama.cpp's \
                      table gives BERT-base style vocabularies; llama.cpp ignores the \
                      pre-tokenizer of WPM vocabularies)",
        steps: &[Pat::Bert],
        pick: |f| (f.model_type.as_deref() == Some("WordPiece")).then_some("jina-v2-en"),
    },
];

/// The facts of a tokenizer.json (+ tokenizer_config.json).
pub(crate) fn facts(tj: &Json, tc: Option<&Json>) -> Facts {
    let model = tj.get("model");
    let mut post = Vec::new();
    if let Some(pp) = tj.get("post_processor").filter(|p| !p.is_null()) {
        let list = pp
            .get("processors")
            .and_then(Json::as_array)
            .cloned()
            .unwrap_or_else(|| vec![pp.clone()]);
        for p in list {
            if let Some(t) = p.get("type").and_then(Json::as_str) {
                post.push(t.to_string());
            }
        }
    }
    Facts {
        model_type: model
            .and_then(|m| m.get("type"))
            .and_then(Json::as_str)
            .map(str::to_string),
        ignore_merges: model
            .and_then(|m| m.get("ignore_merges"))
            .and_then(Json::as_bool)
            .unwrap_or(false),
        clean_up_spaces: tc
            .and_then(|c| c.get("clean_up_tokenization_spaces"))
            .and_then(Json::as_bool),
        post_processors: post,
    }
}

/// The first structure rule that matches, with the name it picks.
pub(crate) fn match_structure(
    tj: &Json,
    tc: Option<&Json>,
) -> Option<(&'static StructureRule, &'static str)> {
    let mut st = Vec::new();
    if let Some(p) = tj.get("pre_tokenizer") {
        steps(p, &mut st);
    }
    let f = facts(tj, tc);
    STRUCTURE_RULES.iter().find_map(|r| {
        let same = r.steps.len() == st.len() && r.steps.iter().zip(&st).all(|(p, s)| p.matches(s));
        if !same {
            return None;
        }
        (r.pick)(&f).map(|name| (r, name))
    })
}

/// A description of the pipeline, for the "not recognised" error.
pub(crate) fn describe(tj: &Json) -> String {
    let mut st = Vec::new();
    if let Some(p) = tj.get("pre_tokenizer") {
        steps(p, &mut st);
    }
    let pre = if st.is_empty() {
        "no pre-tokenizer".to_string()
    } else {
        st.iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .join(" + ")
    };
    let norm = match tj.get("normalizer").filter(|n| !n.is_null()) {
        None => "no normalizer".to_string(),
        Some(n) => format!("normalizer {}", normalizer_types(n)),
    };
    let model = tj
        .get("model")
        .and_then(|m| m.get("type"))
        .and_then(Json::as_str)
        .unwrap_or("untyped");
    format!("pre-tokenizer [{pre}], {norm}, model {model}")
}

fn normalizer_types(n: &Json) -> String {
    match n.get("type").and_then(Json::as_str) {
        Some("Sequence") => {
            let parts: Vec<String> = n
                .get("normalizers")
                .and_then(Json::as_array)
                .into_iter()
                .flatten()
                .map(normalizer_types)
                .collect();
            format!("Sequence[{}]", parts.join(", "))
        }
        Some(t) => t.to_string(),
        None => "untyped".into(),
    }
}

/// The detection over a loaded tokenizer: hash first, then structure.
pub(crate) fn detect(
    tok: &tokenizers::Tokenizer,
    tj: &Json,
    tc: Option<&Json>,
    source: &std::path::Path,
) -> Result<PreTokenizerMatch, ConvertError> {
    let h = chkhsh(tok, source)?;
    if let Some(name) = name_for_chkhsh(&h) {
        return Ok(PreTokenizerMatch {
            name: name.to_string(),
            how: PreTokenizerHow::Hash,
            chkhsh: h,
        });
    }
    if let Some((rule, name)) = match_structure(tj, tc) {
        return Ok(PreTokenizerMatch {
            name: name.to_string(),
            how: PreTokenizerHow::Structure {
                rule: rule.id,
                description: rule.description,
            },
            chkhsh: h,
        });
    }
    Err(ConvertError::Unsupported(format!(
        "{}: BPE pre-tokenizer was not recognized: chkhsh {h} is not in llama.cpp's table \
         and the tokenizer's {} matches none of the known structures ({}); set {} by hand",
        source.display(),
        describe(tj),
        STRUCTURE_RULES
            .iter()
            .map(|r| r.id)
            .collect::<Vec<_>>()
            .join(", "),
        key::PRE,
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chktxt_is_llama_cpps() {
        assert_eq!(CHKTXT.chars().count(), 350);
        assert_eq!(CHKTXT.len(), 431);
        assert_eq!(
            hex(&Sha256::digest(CHKTXT.as_bytes())),
            "a36179c1e2b1cfcfbfad1dc779addad2ffc778201e4cf0d538bddeafa2c526da"
        );
    }

    #[test]
    fn python_list_repr_and_last_row_wins() {
        assert_eq!(
            chkhsh_of_ids(&[1, 2, 3]),
            hex(&Sha256::digest(b"[1, 2, 3]"))
        );
        assert_eq!(chkhsh_of_ids(&[]), hex(&Sha256::digest(b"[]")));
        assert_eq!(
            name_for_chkhsh("0876d13b50744004aa9aeae05e7b0647eac9d801b5ba4668afc01e709c15e19f"),
            Some("jina-v2-en")
        );
        assert_eq!(
            name_for_chkhsh("b6dc8df998e1cfbdc4eac8243701a65afe638679230920b50d6f17d81c098166"),
            Some("olmo")
        );
        assert_eq!(name_for_chkhsh("00"), None);
    }

    fn rule_for(pre: Json, extra: Json) -> Option<&'static str> {
        let mut tj = serde_json::json!({"pre_tokenizer": pre, "model": {"type": "BPE"}});
        if let (Some(o), Some(e)) = (tj.as_object_mut(), extra.as_object()) {
            for (k, v) in e {
                o.insert(k.clone(), v.clone());
            }
        }
        match_structure(&tj, None).map(|(_, n)| n)
    }

    #[test]
    fn cr_lf_spelling_does_not_matter() {
        assert!(same_regex("[^\r\n]", r"[^\r\n]"));
        assert!(!same_regex(r"[^\r]", r"[^\n]"));
        let split = |p: &str| serde_json::json!({"type": "Split", "pattern": {"Regex": p}, "behavior": "Isolated", "invert": false});
        let literal = RE_DSV3_MAIN.replace(r"\r", "\r").replace(r"\n", "\n");
        assert_ne!(literal, RE_DSV3_MAIN);
        let pre = serde_json::json!({"type": "Sequence", "pretokenizers": [
            split(RE_DSV3_DIGITS), split(RE_DSV3_CJK), split(&literal),
            {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false}]});
        assert_eq!(rule_for(pre, serde_json::json!({})), Some("deepseek-v3"));
    }

    #[test]
    fn structure_rules() {
        let bl = |r: bool| serde_json::json!({"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": r});
        let split = |p: &str| serde_json::json!({"type": "Split", "pattern": {"Regex": p}, "behavior": "Isolated", "invert": false});
        assert_eq!(rule_for(bl(true), serde_json::json!({})), Some("gpt-2"));
        assert_eq!(
            rule_for(
                serde_json::json!({"type": "Sequence", "pretokenizers": [split(RE_LLAMA3), bl(false)]}),
                serde_json::json!({"model": {"type": "BPE", "ignore_merges": true}})
            ),
            Some("llama-bpe")
        );
        assert_eq!(
            rule_for(
                serde_json::json!({"type": "Sequence", "pretokenizers": [split(RE_LLAMA3), bl(false)]}),
                serde_json::json!({})
            ),
            Some("dbrx")
        );
        assert_eq!(
            rule_for(
                serde_json::json!({"type": "Sequence", "pretokenizers": [split(RE_QWEN2), bl(false)]}),
                serde_json::json!({})
            ),
            Some("qwen2")
        );
        // The same steps with a different behavior do not match.
        let mut removed = split(RE_QWEN2);
        removed["behavior"] = Json::from("Removed");
        assert_eq!(
            rule_for(
                serde_json::json!({"type": "Sequence", "pretokenizers": [removed, bl(false)]}),
                serde_json::json!({})
            ),
            None
        );
        assert_eq!(
            rule_for(
                serde_json::json!({"type": "Whitespace"}),
                serde_json::json!({})
            ),
            None
        );
    }
}
