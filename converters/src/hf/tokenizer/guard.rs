//! What HuggingFace's `tokenizers` crate is given, checked first.
//!
//! The crate trusts its input in places: a `Precompiled` normalizer's charsmap starts with a
//! trie size that it reserves memory for before looking at how many bytes follow (a 6-byte
//! charsmap asks for 8.5 GB), and indexes the trie and the normalized-string blob without
//! bounds checks (a malformed trie panics on the first encode). A `FixedLength`
//! pre-tokenizer of length 0 panics too, so does a `Prepend` normalizer of an empty string
//! followed by one that maps offsets, and a `Strip` decoder that strips from the end
//! indexes before the start of a short token. A `Replace` normalizer whose pattern can match
//! the empty string inserts its content at the start of the text aligned to nothing; the next
//! step that maps the text's alignments (any normalizer but `Replace` and `Prepend`, or the
//! `ByteLevel` pre-tokenizer) leaves them out of its range and indexes past their end. And a
//! normalized added token that the normalizer turns into the empty string matches at every
//! byte of a text and splits inside its characters ([`check_added_tokens`], run on the
//! loaded tokenizer).
//!
//! [`check`] walks a tokenizer.json's normalizer, pre-tokenizer and decoder trees (Sequences
//! included) and refuses, with the file and the component named, what would make the crate
//! allocate by an untrusted count or panic. [`shield`] runs every call into the crate behind
//! `catch_unwind` as a last line of defence, so a panic that no rule foresaw is an error too.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use serde_json::Value as Json;

use crate::ConvertError;

/// Components nested deeper than this (Sequences of Sequences) are refused. serde_json's
/// own recursion limit (128) stops deeper JSON; this keeps the walk's stack small.
const MAX_DEPTH: usize = 64;

/// Refuses what would make the `tokenizers` crate allocate by an untrusted count or panic.
pub(crate) fn check(tj: &Json, path: &Path) -> Result<(), ConvertError> {
    let err =
        |at: &str, problem: String| ConvertError::format(path, None, format!("{at}: {problem}"));
    if let Some(n) = tj.get("normalizer") {
        walk(n, "normalizer", 0, &mut normalizer).map_err(|(at, p)| err(&at, p))?;
    }
    if let Some(p) = tj.get("pre_tokenizer") {
        walk(p, "pre_tokenizer", 0, &mut pre_tokenizer).map_err(|(at, p)| err(&at, p))?;
    }
    if let Some(d) = tj.get("decoder") {
        walk(d, "decoder", 0, &mut decoder).map_err(|(at, p)| err(&at, p))?;
    }
    if let Some(p) = tj.get("post_processor") {
        walk(p, "post_processor", 0, &mut post_processor).map_err(|(at, p)| err(&at, p))?;
    }
    empty_match_then_mapping(tj).map_err(|(at, p)| err(&at, p))
}

type Found = (String, String);

/// Calls `one` on `c` and on each member of any list of components it holds (under
/// `normalizers`, `pretokenizers`, `decoders` or `processors`), recursively.
fn walk(
    c: &Json,
    at: &str,
    depth: usize,
    one: &mut dyn FnMut(&str, &Json) -> Result<(), Found>,
) -> Result<(), Found> {
    if depth > MAX_DEPTH {
        return Err((at.to_string(), format!("nested deeper than {MAX_DEPTH}")));
    }
    one(at, c)?;
    // Whatever its `type` says: the crate's legacy path picks a component by its fields.
    {
        for k in ["normalizers", "pretokenizers", "decoders", "processors"] {
            if let Some(Json::Array(items)) = c.get(k) {
                for (i, item) in items.iter().enumerate() {
                    walk(item, &format!("{at}.{k}[{i}]"), depth + 1, one)?;
                }
            }
        }
    }
    Ok(())
}

/// Whether `c` can be read as the component `name`. The crate does not trust `type` alone:
/// a `type` it does not know sends the object down a legacy path that takes the first
/// component whose fields it has, and several components (TemplateProcessing, Prepend,
/// Strip, …) never check their tag. So a rule applies to an object named for it or holding
/// the field the rule is about, whatever its `type`.
fn is(c: &Json, name: &str, field: &str) -> bool {
    c.get("type").and_then(Json::as_str) == Some(name) || c.get(field).is_some()
}

fn normalizer(at: &str, c: &Json) -> Result<(), Found> {
    // Prepending "" replaces the first character by an insertion of itself: the normalized
    // string keeps one alignment too few, and the next normalizer or pre-tokenizer that maps
    // alignments (a Precompiled charsmap, a split) indexes past their end.
    if is(c, "Prepend", "prepend") && c.get("prepend").and_then(Json::as_str) == Some("") {
        return Err((
            format!("{at} (Prepend)"),
            "prepend is empty (the tokenizers library corrupts its offsets on it)".to_string(),
        ));
    }
    if is(c, "Precompiled", "precompiled_charsmap") {
        if let Some(v) = c.get("precompiled_charsmap") {
            let Json::String(s) = v else {
                // Not a string: the crate refuses it without looking further (and a null one
                // is Python's "no charsmap").
                return Ok(());
            };
            let bytes = base64_decode(s).ok_or_else(|| {
                (
                    format!("{at} (Precompiled)"),
                    "precompiled_charsmap is not base64".to_string(),
                )
            })?;
            check_charsmap(&bytes).map_err(|p| {
                (
                    format!("{at} (Precompiled)"),
                    format!("precompiled_charsmap ({} bytes) {p}", bytes.len()),
                )
            })?;
        }
    }
    Ok(())
}

/// The normalizers the `tokenizers` crate has, by `type`. All but `Sequence`, `Replace` and
/// `Prepend` rewrite the whole text through its alignments.
const NORMALIZERS: [&str; 14] = [
    "BertNormalizer",
    "Strip",
    "StripAccents",
    "NFC",
    "NFD",
    "NFKC",
    "NFKD",
    "Sequence",
    "Lowercase",
    "Nmt",
    "Precompiled",
    "Replace",
    "Prepend",
    "ByteLevel",
];

/// The pre-tokenizers that only split the text (slices keep their alignments); `ByteLevel`,
/// the one that remaps each piece, is not among them.
const SPLITTING_PRE_TOKENIZERS: [&str; 11] = [
    "BertPreTokenizer",
    "Delimiter",
    "Metaspace",
    "Whitespace",
    "Sequence",
    "Split",
    "Punctuation",
    "WhitespaceSplit",
    "Digits",
    "UnicodeScripts",
    "FixedLength",
];

/// Why a `Replace` pattern (`{"String": …}` or `{"Regex": …}`) may match the empty string,
/// or `None` when it cannot.
fn matches_empty(pattern: &Json) -> Option<String> {
    if pattern.get("String").and_then(Json::as_str) == Some("") {
        return Some("the pattern is the empty string".into());
    }
    let re = pattern.get("Regex").and_then(Json::as_str)?;
    let shown: String = re.chars().take(80).collect();
    match regex_syntax::parse(re) {
        Ok(hir) if hir.properties().minimum_len() == Some(0) => {
            Some(format!("the regex {shown:?} can match the empty string"))
        }
        Ok(_) => None,
        // Lookaround, backreferences and the like (fancy-regex syntax) are zero-width or may
        // be empty: such a pattern is taken to match the empty string.
        Err(_) => Some(format!(
            "the regex {shown:?} may match the empty string (its syntax is beyond what this \
             check reads)"
        )),
    }
}

/// Refuses a `Replace` normalizer whose pattern can match the empty string when a later
/// step maps the text's alignments. The crate gives what an empty match inserts at the start
/// of the text the alignment of nothing (0, 0); a later whole-text transform converts "all of
/// the original" to a normalized range that starts after those characters, rewrites every
/// character anyway, and indexes past the end of the alignments (a panic on the first
/// encode). Elsewhere an inserted character takes its neighbour's alignment, and `Replace`
/// and `Prepend` themselves work on normalized ranges, so an empty-matching Replace that
/// nothing remaps afterwards (one that marks the start of the text for a Metaspace
/// pre-tokenizer, say) is kept.
fn empty_match_then_mapping(tj: &Json) -> Result<(), Found> {
    let mut inserts: Option<(String, String)> = None;
    let mapped_after = |first: &(String, String), at: &str, what: &str| -> Found {
        (
            format!("{} (Replace)", first.0),
            format!(
                "{}, and {at} ({what}) remaps the text after it: the tokenizers library aligns \
                 what an empty match inserts at the start to nothing and then indexes past the \
                 alignments",
                first.1
            ),
        )
    };
    if let Some(n) = tj.get("normalizer") {
        walk(n, "normalizer", 0, &mut |at, c| {
            if !c.is_object() {
                return Ok(());
            }
            let ty = c.get("type").and_then(Json::as_str);
            let known = ty.is_some_and(|t| NORMALIZERS.contains(&t));
            // A component of unknown type is read by its fields: it may be any of them.
            let maps = !known || !matches!(ty, Some("Sequence" | "Replace" | "Prepend"));
            if maps {
                if let Some(first) = &inserts {
                    return Err(mapped_after(first, at, ty.unwrap_or("no type")));
                }
            }
            if inserts.is_none() && (ty == Some("Replace") || !known) {
                if let Some(why) = c.get("pattern").and_then(matches_empty) {
                    inserts = Some((at.to_string(), why));
                }
            }
            Ok(())
        })?;
    }
    if let (Some(first), Some(p)) = (&inserts, tj.get("pre_tokenizer")) {
        walk(p, "pre_tokenizer", 0, &mut |at, c| {
            let ty = c.get("type").and_then(Json::as_str);
            if c.is_object() && !ty.is_some_and(|t| SPLITTING_PRE_TOKENIZERS.contains(&t)) {
                return Err(mapped_after(first, at, ty.unwrap_or("no type")));
            }
            Ok(())
        })?;
    }
    Ok(())
}

fn pre_tokenizer(at: &str, c: &Json) -> Result<(), Found> {
    if is(c, "FixedLength", "length") && c.get("length").and_then(Json::as_u64) == Some(0) {
        return Err((
            format!("{at} (FixedLength)"),
            "length 0 (chunks of no characters)".to_string(),
        ));
    }
    Ok(())
}

fn decoder(at: &str, c: &Json) -> Result<(), Found> {
    if is(c, "Strip", "stop") {
        // The crate walks `stop` characters back from each token's end without checking the
        // token's length, and slices start..end even when they cross: any token made only of
        // the stripped character and shorter than `stop` (or `start + stop`) panics. Real
        // tokenizers strip only from the start (llama's `Strip(" ", 1, 0)`).
        if let Some(stop) = c.get("stop").and_then(Json::as_u64) {
            if stop > 0 {
                return Err((
                    format!("{at} (Strip)"),
                    format!(
                        "stop = {stop}: stripping from the end of a token is not supported \
                         (the tokenizers library indexes past the start of short tokens)"
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn post_processor(at: &str, c: &Json) -> Result<(), Found> {
    if !["single", "pair", "special_tokens"]
        .iter()
        .any(|f| is(c, "TemplateProcessing", f))
    {
        return Ok(());
    }
    // Encoding with special tokens looks each template token up in `special_tokens` without
    // checking it is there, and `$B` in the single-sequence template indexes a second sequence
    // that a single encode does not have: both panic.
    let at = format!("{at} (TemplateProcessing)");
    let specials = c.get("special_tokens").and_then(Json::as_object);
    // A special token's ids and tokens become parallel columns of an encoding.
    for (name, token) in specials.into_iter().flatten() {
        let len = |k| token.get(k).and_then(Json::as_array).map(Vec::len);
        if len("ids") != len("tokens") {
            return Err((
                at,
                format!("special token {name:?} has a different number of ids and tokens"),
            ));
        }
    }
    for template in ["single", "pair"] {
        let Some(Json::Array(pieces)) = c.get(template) else {
            continue;
        };
        for piece in pieces {
            if let Some(id) = piece.pointer("/SpecialToken/id").and_then(Json::as_str) {
                if !specials.is_some_and(|m| m.contains_key(id)) {
                    return Err((
                        at,
                        format!("the {template} template uses special token {id:?}, which special_tokens does not define"),
                    ));
                }
            }
            let sequence = piece.pointer("/Sequence/id").and_then(Json::as_str);
            if template == "single" && sequence.is_some_and(|id| id != "A") {
                return Err((at, "the single template uses a second sequence ($B)".into()));
            }
        }
    }
    Ok(())
}

/// Standard base64, padded or not (the crate's decoder accepts both); `None` when it is not.
fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let s = s.as_bytes();
    let body = match s.iter().rposition(|&b| b != b'=') {
        Some(last) => &s[..=last],
        None => &s[..0],
    };
    let pad = s.len() - body.len();
    if pad > 2 || (pad > 0 && !s.len().is_multiple_of(4)) || body.len() % 4 == 1 {
        return None;
    }
    let val = |b: u8| -> Option<u32> {
        Some(match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let mut out = Vec::with_capacity(body.len() / 4 * 3 + 2);
    for chunk in body.chunks(4) {
        let mut acc = 0u32;
        for &b in chunk {
            acc = acc << 6 | val(b)?;
        }
        match chunk.len() {
            4 => out.extend_from_slice(&[(acc >> 16) as u8, (acc >> 8) as u8, acc as u8]),
            3 => out.extend_from_slice(&[(acc >> 10) as u8, (acc >> 2) as u8]),
            2 => out.push((acc >> 4) as u8),
            _ => return None,
        }
    }
    Some(out)
}

/// A SentencePiece `precompiled_charsmap`: a little-endian u32 trie size in bytes, the trie
/// (darts-clone double-array units of 4 bytes), then the normalized strings (UTF-8, each
/// ended by NUL). Checks the sizes against the bytes present, and that every trie node an
/// input can reach lies inside the array and every replacement it can point to starts inside
/// the normalized blob on a character boundary: the crate indexes all of these unchecked.
pub(crate) fn check_charsmap(b: &[u8]) -> Result<(), String> {
    let Some(head) = b.get(..4) else {
        return Err("is shorter than its 4-byte trie size".into());
    };
    let trie_size = u32::from_le_bytes([head[0], head[1], head[2], head[3]]) as u64;
    let rest = (b.len() - 4) as u64;
    if trie_size > rest {
        return Err(format!(
            "declares a {trie_size}-byte trie, but only {rest} bytes follow its size"
        ));
    }
    if !trie_size.is_multiple_of(4) {
        return Err(format!(
            "declares a {trie_size}-byte trie, not a whole number of 4-byte units"
        ));
    }
    let trie_end = 4 + trie_size as usize;
    let units: Vec<u32> = b[4..trie_end]
        .chunks_exact(4)
        .map(|u| u32::from_le_bytes([u[0], u[1], u[2], u[3]]))
        .collect();
    let normalized = std::str::from_utf8(&b[trie_end..]).map_err(|e| {
        format!(
            "has a normalized-string blob that is not UTF-8 (at byte {})",
            trie_end + e.valid_up_to()
        )
    })?;
    check_trie(&units, normalized)
}

// darts-clone unit fields, as the crate reads them.
fn has_leaf(u: u32) -> bool {
    (u >> 8) & 1 == 1
}
fn value(u: u32) -> usize {
    (u & 0x7fff_ffff) as usize
}
fn label(u: u32) -> usize {
    (u & 0x8000_00ff) as usize
}
fn offset(u: u32) -> usize {
    ((u >> 10) as usize) << ((u & (1 << 9)) >> 6)
}

/// Every node reachable from the root: its 256 child slots (`base ^ byte`) lie inside the
/// array (a lookup with any byte reads one), and a node flagged with a leaf has its value
/// unit inside the array and a value that starts a replacement inside `normalized`.
fn check_trie(units: &[u32], normalized: &str) -> Result<(), String> {
    let n = units.len();
    let Some(&root) = units.first() else {
        return Err("has an empty trie".into());
    };
    let in_block = |base: usize| base | 0xff < n;
    let start = offset(root);
    if !in_block(start) {
        return Err(format!(
            "has a trie root pointing at unit {start}, outside its {n} units"
        ));
    }
    let mut seen = vec![false; n];
    let mut stack = vec![start];
    seen[start] = true;
    while let Some(base) = stack.pop() {
        for c in 1..=255usize {
            let pos = base ^ c;
            let u = units[pos];
            if label(u) != c {
                continue;
            }
            let next = pos ^ offset(u);
            if !in_block(next) {
                return Err(format!(
                    "has a trie node (unit {pos}) pointing at unit {next}, outside its {n} units"
                ));
            }
            if has_leaf(u) {
                let v = value(units[next]);
                if v > normalized.len() || !normalized.is_char_boundary(v) {
                    return Err(format!(
                        "has a trie value {v} (unit {next}) that does not start a string in \
                         its {}-byte normalized blob",
                        normalized.len()
                    ));
                }
            }
            if !seen[next] {
                seen[next] = true;
                stack.push(next);
            }
        }
    }
    Ok(())
}

/// Refuses a loaded tokenizer with a normalized added token that its normalizer maps to the
/// empty string (a Replace that removes it, say). The crate matches added tokens in the
/// normalized text by their normalized form: an empty one matches at every byte, splits
/// inside a multi-byte character and panics ("AddedVocabulary bad split") on the first
/// encode of such text. The crate normalized these contents itself while loading, so this
/// runs nothing new; call it inside [`shield`].
pub(crate) fn check_added_tokens(
    tok: &tokenizers::Tokenizer,
    path: &Path,
) -> Result<(), ConvertError> {
    use tokenizers::Normalizer;
    let Some(normalizer) = tok.get_normalizer() else {
        return Ok(());
    };
    let mut added: Vec<(u32, tokenizers::AddedToken)> =
        tok.get_added_tokens_decoder().into_iter().collect();
    added.sort_by_key(|(id, _)| *id);
    for (id, t) in added {
        if !t.normalized || t.content.is_empty() {
            continue;
        }
        let mut s = tokenizers::NormalizedString::from(t.content.as_str());
        normalizer.normalize(&mut s).map_err(|e| {
            ConvertError::format(
                path,
                None,
                format!("added token {id} {:?} cannot be normalized: {e}", t.content),
            )
        })?;
        if s.get().is_empty() {
            return Err(ConvertError::format(
                path,
                None,
                format!(
                    "added token {id} {:?} is normalized, and the normalizer turns it into the \
                     empty string (the tokenizers library would match it at every byte and \
                     split inside characters)",
                    t.content
                ),
            ));
        }
    }
    Ok(())
}

/// Runs `f` (a call into the `tokenizers` crate), turning a panic into an error about `path`.
pub(crate) fn shield<T>(
    path: &Path,
    what: &str,
    f: impl FnOnce() -> Result<T, ConvertError>,
) -> Result<T, ConvertError> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => {
            let msg = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            let msg: String = msg.chars().take(200).collect();
            Err(super::library_error(
                path,
                &format!("failed while {what}"),
                &msg,
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A template naming a special token its table lacks, or `$B` in the single template,
    /// panics the crate on the first encode with special tokens (found by the tokenizer_json
    /// fuzz target: testdata/fuzz-regressions/tokenizer_json/).
    #[test]
    fn templates_must_name_defined_special_tokens_and_one_sequence() {
        let path = Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../testdata/fuzz-regressions/tokenizer_json/template-unknown-special.json"
        ));
        let mut tj: Json = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        let e = check(&tj, path).unwrap_err().to_string();
        assert!(
            e.contains("TemplateProcessing") && e.contains("QQQQ<s>"),
            "{e}"
        );
        tj["post_processor"]["single"][0]["SpecialToken"]["id"] = "<s>".into();
        check(&tj, path).unwrap();
        tj["post_processor"]["single"][1]["Sequence"]["id"] = "B".into();
        let e = check(&tj, path).unwrap_err().to_string();
        assert!(e.contains("second sequence"), "{e}");
        // Inside a Sequence of processors too.
        let template = tj["post_processor"].take();
        tj["post_processor"] = serde_json::json!({"type": "Sequence", "processors": [template]});
        assert!(check(&tj, path).is_err());
    }

    /// The crate does not check a TemplateProcessing's `type`: a misspelt one is still a
    /// template (found by the tokenizer_json fuzz target's 30-minute run), and the other
    /// rules follow the fields too.
    #[test]
    fn rules_follow_the_fields_not_the_type_name() {
        let path = Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../testdata/fuzz-regressions/tokenizer_json/template-misspelt-type.json"
        ));
        let mut tj: Json = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        let e = check(&tj, path).unwrap_err().to_string();
        assert!(e.contains("QQQQ<s>"), "{e}");
        tj["post_processor"]["single"][0]["SpecialToken"]["id"] = "<s>".into();
        check(&tj, path).unwrap();
        tj["post_processor"]["special_tokens"]["<s>"]["ids"] = serde_json::json!([1, 2]);
        let e = check(&tj, path).unwrap_err().to_string();
        assert!(e.contains("different number of ids and tokens"), "{e}");
        for (key, component) in [
            (
                "normalizer",
                serde_json::json!({"type": "Prepnd", "prepend": ""}),
            ),
            (
                "pre_tokenizer",
                serde_json::json!({"type": "Fixed", "length": 0}),
            ),
            (
                "decoder",
                serde_json::json!({"type": "Strp", "content": " ", "start": 0, "stop": 1}),
            ),
            (
                "normalizer",
                serde_json::json!({"type": "Seq", "normalizers": [{"type": "Prepend", "prepend": ""}]}),
            ),
        ] {
            let mut t = tj.clone();
            t["post_processor"] = Json::Null;
            t[key] = component;
            assert!(check(&t, path).is_err(), "{key}: {}", t[key]);
        }
    }

    #[test]
    fn replace_patterns_that_can_match_the_empty_string() {
        use serde_json::json;
        for (pattern, empty) in [
            (json!({"String": ""}), true),
            (json!({"String": " "}), false),
            (json!({"String": "``"}), false),
            (json!({"Regex": ""}), true),
            (json!({"Regex": "^"}), true),
            (json!({"Regex": "\\b"}), true),
            (json!({"Regex": "a*"}), true),
            (json!({"Regex": "a|"}), true),
            (json!({"Regex": "(?=a)"}), true),
            (json!({"Regex": "(?<!\\n)^"}), true),
            (json!({"Regex": " {2,}"}), false),
            (json!({"Regex": "\\s+"}), false),
            (json!({"Regex": "\\s{2,}|[\\n\\r\\t]"}), false),
            (json!({"Regex": "[^\\s\\S]"}), false),
            (json!({"Other": ""}), false),
        ] {
            assert_eq!(matches_empty(&pattern).is_some(), empty, "{pattern}");
        }
    }

    /// The order decides: an empty-matching Replace is refused only when a later normalizer
    /// or the ByteLevel pre-tokenizer remaps the text.
    #[test]
    fn empty_match_is_refused_only_before_a_remapping_step() {
        use serde_json::json;
        let empty = json!({"type": "Replace", "pattern": {"String": ""}, "content": "x"});
        let seq = |v: Vec<Json>| json!({"type": "Sequence", "normalizers": v});
        let split = json!({"type": "Whitespace"});
        let byte_level = json!({"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"String": " "}, "behavior": "Isolated", "invert": false},
            {"type": "ByteLevel"}]});
        let nfc = json!({"type": "NFC"});
        let prepend = json!({"type": "Prepend", "prepend": "_"});
        for (normalizer, pre, refused) in [
            (seq(vec![empty.clone(), nfc.clone()]), &split, true),
            (seq(vec![nfc.clone(), empty.clone()]), &split, false),
            (
                seq(vec![empty.clone(), prepend.clone(), empty.clone()]),
                &split,
                false,
            ),
            (seq(vec![empty.clone(), prepend, nfc.clone()]), &split, true),
            (seq(vec![nfc.clone(), empty.clone()]), &byte_level, true),
            (
                seq(vec![seq(vec![empty.clone()]), seq(vec![nfc])]),
                &split,
                true,
            ),
            (empty, &Json::Null, false),
        ] {
            let tj = json!({"normalizer": normalizer, "pre_tokenizer": pre});
            let r = check(&tj, Path::new("tokenizer.json"));
            assert_eq!(r.is_err(), refused, "{tj}: {r:?}");
        }
    }

    #[test]
    fn base64_decodes_padded_and_unpadded() {
        for (text, bytes) in [
            ("", &b""[..]),
            ("YQ==", b"a"),
            ("YWI=", b"ab"),
            ("YWJj", b"abc"),
            ("YWJjZA==", b"abcd"),
            ("/+8=", b"\xff\xef"),
        ] {
            assert_eq!(base64_decode(text).as_deref(), Some(bytes), "{text}");
            let bare = text.trim_end_matches('=');
            assert_eq!(base64_decode(bare).as_deref(), Some(bytes), "{bare}");
        }
        assert_eq!(base64_decode("AAAA////").unwrap(), [0, 0, 0, 255, 255, 255]);
        assert!(base64_decode("A").is_none());
        assert!(base64_decode("AA=A").is_none());
        assert!(base64_decode("A*AA").is_none());
    }

    /// A trie mapping the single byte `a` to the replacement at offset `v`.
    fn one_entry(v: u32) -> Vec<u32> {
        // root unit 0: offset 256 (base 256); child for 'a' at 256 ^ 0x61 = 0x161, label 'a',
        // leaf flag, offset 0x61 -> next = 0x161 ^ 0x61 = 256, whose unit holds the value.
        let mut t = vec![0u32; 512];
        t[0] = 256 << 10;
        t[0x161] = 0x61 | 1 << 8 | 0x61 << 10;
        t[256] = v;
        t
    }

    #[test]
    fn trie_bounds() {
        assert!(check_trie(&one_entry(0), "x\0").is_ok());
        assert!(check_trie(&one_entry(2), "x\0").is_ok());
        assert!(check_trie(&one_entry(3), "x\0").is_err());
        assert!(check_trie(&one_entry(1), "é").is_err());
        assert!(check_trie(&one_entry(0)[..300], "x\0").is_err());
        assert!(check_trie(&[], "").is_err());
    }

    #[test]
    fn charsmap_sizes() {
        assert!(check_charsmap(&[0, 0, 0, 255, 255, 255])
            .unwrap_err()
            .contains("declares a 4278190080-byte trie, but only 2 bytes follow"));
        assert!(check_charsmap(&[1, 0]).is_err());
        assert!(check_charsmap(&[2, 0, 0, 0, 0, 0]).is_err());
        let mut b = 2048u32.to_le_bytes().to_vec();
        for u in one_entry(0) {
            b.extend_from_slice(&u.to_le_bytes());
        }
        b.extend_from_slice(b"x\0");
        assert!(check_charsmap(&b).is_ok());
        b.push(0xff);
        assert!(check_charsmap(&b).unwrap_err().contains("not UTF-8"));
    }
}
