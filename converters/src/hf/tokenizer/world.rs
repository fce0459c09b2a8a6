//! The RWKV World vocabulary (`_set_vocab_rwkv_world`): `rwkv_vocab_v20230424.txt`, one token
//! a line as `ID LITERAL LENGTH`, the literal a Python `str` or `bytes` literal.
//!
//! The table is `<s>` (CONTROL) followed by the file's tokens in line order (the ids are not
//! read), each written as the text of its bytes' Python `repr` without the `b'…'` around it,
//! then `[PAD<i>]` (UNUSED) up to `vocab_size` (65536 when absent). The special vocabulary is
//! the directory's, with a fixed end-of-turn id 261 where the files give none and bos and eos
//! forced to 0; without a chat template it takes llama.cpp's RWKV World template.

use std::path::Path;

use ggufkit::gguf::keys::tokenizer as key;
use ggufkit::gguf::ArrayValue;
use serde_json::Value as Json;

use super::kv::{strings, token_type, Kv};
use super::special::{ChatTemplate, SpecialVocab};
use super::{hparam, VocabPath};
use crate::hf::ModelDir;
use crate::ConvertError;

/// The vocabulary file RWKV World checkpoints carry.
pub(crate) const VOCAB_FILE: &str = "rwkv_vocab_v20230424.txt";

/// The end-of-turn id the reference sets (`\n\n` in the published vocabulary).
const EOT_ID: i128 = 261;

/// llama.cpp's `models/templates/llama-cpp-rwkv-world.jinja`, the template a checkpoint
/// without one gets.
const TEMPLATE: &str = include_str!("world_template.jinja");

/// The vocabulary keys of an RWKV World checkpoint.
pub(crate) fn set_vocab(
    dir: &ModelDir,
    hparams: &Json,
    kv: &mut Kv,
) -> Result<VocabPath, ConvertError> {
    let path = dir.join(VOCAB_FILE);
    if !path.is_file() {
        return Err(ConvertError::MissingFile {
            path,
            why: "the RWKV World vocabulary is read from this file".into(),
        });
    }
    let text = super::json::read_text(&path)?;
    let size = match hparam(hparams, "vocab_size") {
        None => 65536,
        Some(v) => v
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| ConvertError::NotACount {
                key: "vocab_size".into(),
                value: v.to_string(),
            })?,
    };
    let mut tokens = vec!["<s>".to_string()];
    let mut types = vec![token_type::CONTROL];
    for (offset, line) in lines(&text) {
        tokens.push(parse_line(&path, offset, line)?);
        types.push(token_type::NORMAL);
    }
    if tokens.len() > size {
        return Err(ConvertError::format(
            &path,
            None,
            format!(
                "{} tokens (with <s>) do not fit in vocab_size {size}",
                tokens.len()
            ),
        ));
    }
    super::spm::check_size(size)?;
    for i in tokens.len()..size {
        tokens.push(format!("[PAD{i}]"));
        types.push(token_type::UNUSED);
    }
    kv.string(key::MODEL, "rwkv");
    kv.array(key::TOKENS, strings(tokens));
    kv.array(key::TOKEN_TYPE, ArrayValue::I32(types));
    let mut sv = SpecialVocab::load(dir, false, None, None)?;
    if sv.chat_template.is_none() {
        sv.chat_template = Some(ChatTemplate::One(TEMPLATE.to_string()));
    }
    sv.set_special_token("eot", EOT_ID)?;
    for typ in ["bos", "eos"] {
        match sv.special_token_ids.iter_mut().find(|(k, _)| k == typ) {
            Some(e) => e.1 = 0,
            None => sv.special_token_ids.push((typ.to_string(), 0)),
        }
    }
    sv.add_to(kv)?;
    Ok(VocabPath::RwkvWorld)
}

/// The file's lines as Python's text mode reads them (`\n`, `\r\n` and `\r` end a line),
/// each with its byte offset.
fn lines(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let (mut start, mut i) = (0, 0);
    while i < bytes.len() {
        let end = match bytes[i] {
            b'\n' => Some(i + 1),
            b'\r' if bytes.get(i + 1) == Some(&b'\n') => Some(i + 2),
            b'\r' => Some(i + 1),
            _ => None,
        };
        if let Some(end) = end {
            out.push((start, &text[start..i]));
            start = end;
            i = end;
        } else {
            i += 1;
        }
    }
    if start < bytes.len() {
        out.push((start, &text[start..]));
    }
    out
}

/// One line: the literal between the first and the last space, checked against the length
/// after it; the token's text as the reference writes it.
fn parse_line(path: &Path, offset: usize, line: &str) -> Result<String, ConvertError> {
    let bad = |what: String| ConvertError::format(path, Some(offset as u64), what);
    let (first, last) = match (line.find(' '), line.rfind(' ')) {
        (Some(f), Some(l)) if f < l => (f, l),
        _ => return Err(bad(format!("not an `ID LITERAL LENGTH` line: {line:?}"))),
    };
    let literal = &line[first + 1..last];
    let length: usize = line[last + 1..].trim().parse().map_err(|_| {
        bad(format!(
            "the token length {:?} is not a count",
            &line[last + 1..]
        ))
    })?;
    let token = python_literal(literal).map_err(|why| bad(format!("{literal}: {why}")))?;
    if token.len() != length {
        return Err(bad(format!(
            "{literal} is {} bytes long, the line says {length}",
            token.len()
        )));
    }
    Ok(bytes_repr_body(&token))
}

/// The bytes of a Python `str` (as UTF-8) or `bytes` literal: optional `b` prefix, single or
/// double quotes, backslash escapes.
fn python_literal(lit: &str) -> Result<Vec<u8>, String> {
    let (is_bytes, rest) = match lit.strip_prefix(['b', 'B']) {
        Some(r) => (true, r),
        None => (false, lit),
    };
    let quote = rest
        .chars()
        .next()
        .filter(|c| *c == '\'' || *c == '"')
        .ok_or("not a quoted literal")?;
    let body = rest
        .strip_prefix(quote)
        .and_then(|r| r.strip_suffix(quote))
        .ok_or("unterminated literal")?;
    let mut out = Vec::new();
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c == quote {
            return Err("an unescaped quote inside the literal".into());
        }
        if c != '\\' {
            if is_bytes && !c.is_ascii() {
                return Err("a bytes literal holds only ASCII characters".into());
            }
            push_char(&mut out, c);
            continue;
        }
        let e = chars.next().ok_or("a trailing backslash")?;
        match e {
            '\\' | '\'' | '"' => out.push(e as u8),
            'n' => out.push(b'\n'),
            'r' => out.push(b'\r'),
            't' => out.push(b'\t'),
            'a' => out.push(0x07),
            'b' => out.push(0x08),
            'f' => out.push(0x0c),
            'v' => out.push(0x0b),
            '\n' => {}
            '0'..='7' => {
                let mut v = e.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match chars.peek().and_then(|d| d.to_digit(8)) {
                        Some(d) => {
                            v = v * 8 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                push_code(&mut out, v, is_bytes)?;
            }
            'x' => push_code(&mut out, hex(&mut chars, 2)?, is_bytes)?,
            'u' if !is_bytes => push_code(&mut out, hex(&mut chars, 4)?, false)?,
            'U' if !is_bytes => push_code(&mut out, hex(&mut chars, 8)?, false)?,
            'N' if !is_bytes => return Err("named escapes (\\N{…}) are not supported".into()),
            other => {
                out.push(b'\\');
                push_char(&mut out, other);
            }
        }
    }
    Ok(out)
}

fn hex(chars: &mut std::iter::Peekable<std::str::Chars>, n: usize) -> Result<u32, String> {
    let mut v = 0u32;
    for _ in 0..n {
        let d = chars
            .next()
            .and_then(|c| c.to_digit(16))
            .ok_or("a truncated hexadecimal escape")?;
        v = v * 16 + d;
    }
    Ok(v)
}

fn push_char(out: &mut Vec<u8>, c: char) {
    let mut buf = [0u8; 4];
    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
}

/// A numeric escape: one byte in a `bytes` literal, a code point (written as UTF-8) in a
/// `str` one.
fn push_code(out: &mut Vec<u8>, v: u32, is_bytes: bool) -> Result<(), String> {
    match char::from_u32(v) {
        Some(_) if is_bytes && v < 256 => out.push(v as u8),
        Some(c) if !is_bytes => push_char(out, c),
        _ => return Err(format!("escape value {v:#x} is out of range")),
    }
    Ok(())
}

/// `repr(token)[2:-1]` for `bytes`: the body of Python's `b'…'` (or `b"…"` when the token has
/// a single quote and no double quote) representation.
fn bytes_repr_body(token: &[u8]) -> String {
    let quote = if token.contains(&b'\'') && !token.contains(&b'"') {
        b'"'
    } else {
        b'\''
    };
    let mut s = String::with_capacity(token.len());
    for &b in token {
        match b {
            b'\\' => s.push_str("\\\\"),
            b'\t' => s.push_str("\\t"),
            b'\n' => s.push_str("\\n"),
            b'\r' => s.push_str("\\r"),
            _ if b == quote => {
                s.push('\\');
                s.push(b as char);
            }
            0x20..=0x7e => s.push(b as char),
            _ => s.push_str(&format!("\\x{b:02x}")),
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_decode_as_python_does() {
        assert_eq!(python_literal("'\\n\\n'").unwrap(), b"\n\n");
        assert_eq!(python_literal("b'\\xff\\xfe'").unwrap(), [0xff, 0xfe]);
        assert_eq!(python_literal("'\\x7f'").unwrap(), [0x7f]);
        assert_eq!(python_literal("'caf\u{e9}'").unwrap(), "café".as_bytes());
        assert_eq!(python_literal("'\\xe9'").unwrap(), "é".as_bytes());
        assert_eq!(python_literal("\"it's\"").unwrap(), b"it's");
        assert_eq!(python_literal("'\\\\'").unwrap(), b"\\");
        assert_eq!(python_literal("'\\q'").unwrap(), b"\\q");
        assert!(python_literal("'abc").is_err());
        assert!(python_literal("abc").is_err());
        assert!(python_literal("b'\u{e9}'").is_err());
    }

    #[test]
    fn token_text_is_the_bytes_repr_body() {
        assert_eq!(bytes_repr_body(b"\n\n"), "\\n\\n");
        assert_eq!(bytes_repr_body(b"it's"), "it's");
        assert_eq!(bytes_repr_body(b"say \"hi\" it's"), "say \"hi\" it\\'s");
        assert_eq!(bytes_repr_body("é".as_bytes()), "\\xc3\\xa9");
        assert_eq!(bytes_repr_body(&[0x7f, 0x00]), "\\x7f\\x00");
    }

    #[test]
    fn a_line_whose_length_disagrees_names_its_offset() {
        let err = parse_line(Path::new("v.txt"), 12, "5 'ab' 3").unwrap_err();
        assert!(matches!(
            err,
            ConvertError::Format {
                offset: Some(12),
                ..
            }
        ));
        assert_eq!(
            parse_line(Path::new("v.txt"), 0, "7 'a b' 3").unwrap(),
            "a b"
        );
    }

    #[test]
    fn lines_end_as_in_text_mode() {
        let l: Vec<_> = lines("a\r\nb\rc\nd").into_iter().map(|(_, s)| s).collect();
        assert_eq!(l, ["a", "b", "c", "d"]);
    }
}
