//! A small decoder for the part of SentencePiece's `ModelProto` (`tokenizer.model`) the
//! converter needs.
//!
//! Field numbers are those of the public `sentencepiece_model.proto`:
//!
//! ```text
//! ModelProto      1 pieces (repeated SentencePiece)   2 trainer_spec   3 normalizer_spec
//! SentencePiece   1 piece (string)   2 score (float)   3 type (enum, NORMAL when absent)
//! TrainerSpec     3 model_type   4 vocab_size   35 byte_fallback
//!                 40 unk_id   41 bos_id   42 eos_id   43 pad_id
//! NormalizerSpec  1 name   2 precompiled_charsmap   3 add_dummy_prefix
//!                 4 remove_extra_whitespaces
//! ```
//!
//! Everything else is skipped by wire type. The decoder never trusts a length or count: every
//! length-delimited field is checked against the bytes that remain, nothing is allocated
//! ahead of the data that fills it, and only the known messages are descended into (depth
//! 2 at most), so a truncated or hostile file
//! gives a [`ProtoError`] with the byte offset at fault, never a panic.

use std::fmt;

use ggufkit::cursor::Cursor;

/// The kind of a piece (`SentencePiece.Type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PieceType {
    /// 1: an ordinary piece (also any value the enum does not know, as protobuf leaves an
    /// unknown proto2 enum value unset).
    Normal,
    /// 2: the unknown piece.
    Unknown,
    /// 3: a control symbol (`<s>`, `</s>`).
    Control,
    /// 4: a user-defined symbol.
    UserDefined,
    /// 5: an unused piece.
    Unused,
    /// 6: a byte-fallback piece (`<0x0A>`).
    Byte,
}

impl PieceType {
    fn from_wire(v: u64) -> PieceType {
        match v {
            2 => PieceType::Unknown,
            3 => PieceType::Control,
            4 => PieceType::UserDefined,
            5 => PieceType::Unused,
            6 => PieceType::Byte,
            _ => PieceType::Normal,
        }
    }
}

/// One vocabulary entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Piece {
    /// The piece text (`▁the`, `<0x0A>`, `<s>`).
    pub piece: String,
    /// Its score (log probability for unigram, negative rank for BPE).
    pub score: f32,
    /// Its kind.
    pub kind: PieceType,
}

/// The fields of a `tokenizer.model` the converter looks at.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SpmModel {
    /// The vocabulary, in id order.
    pub pieces: Vec<Piece>,
    /// `trainer_spec.model_type` (1 unigram, 2 BPE, 3 word, 4 char), if present.
    pub model_type: Option<u64>,
    /// `trainer_spec.vocab_size`, if present.
    pub vocab_size: Option<u64>,
    /// `trainer_spec.byte_fallback`, if present.
    pub byte_fallback: Option<bool>,
    /// `trainer_spec.{unk,bos,eos,pad}_id`, if present.
    pub special_ids: [Option<i64>; 4],
    /// `trainer_spec.{unk,bos,eos,pad}_piece`, if present (SentencePiece finds its special
    /// ids by these strings; the defaults are `<unk>`, `<s>`, `</s>`, `<pad>`).
    pub special_pieces: [Option<String>; 4],
    /// `normalizer_spec.name`, if present.
    pub normalizer_name: Option<String>,
    /// `normalizer_spec.add_dummy_prefix`, if present (the proto default is true).
    pub add_dummy_prefix: Option<bool>,
    /// `normalizer_spec.remove_extra_whitespaces`, if present (the proto default is true).
    pub remove_extra_whitespaces: Option<bool>,
    /// `normalizer_spec.precompiled_charsmap` (empty when absent).
    pub precompiled_charsmap: Vec<u8>,
}

/// Why a `tokenizer.model` could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtoError {
    /// Byte offset of the field at fault.
    pub offset: u64,
    /// What is wrong.
    pub problem: String,
}

impl fmt::Display for ProtoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at byte {}: {}", self.offset, self.problem)
    }
}

impl std::error::Error for ProtoError {}

/// Wire types.
const VARINT: u8 = 0;
const FIXED64: u8 = 1;
const LEN: u8 = 2;
const FIXED32: u8 = 5;

/// The checked cursor over one message's bytes (its offsets are absolute), with protobuf's
/// varints and fields on top.
struct Reader<'a> {
    c: Cursor<'a>,
}

/// A decoded field value.
enum Field<'a> {
    Varint(u64),
    Fixed32(u32),
    Fixed64,
    Bytes(&'a [u8], usize),
}

impl<'a> Reader<'a> {
    fn new(buf: &'a [u8], base: usize) -> Self {
        Reader {
            c: Cursor::at(buf, base as u64),
        }
    }

    /// An error at absolute offset `at`.
    fn err(&self, at: usize, problem: impl Into<String>) -> ProtoError {
        ProtoError {
            offset: at as u64,
            problem: problem.into(),
        }
    }

    /// Absolute offset of the next read (`base` plus a position in memory: fits a usize).
    fn offset(&self) -> usize {
        self.c.offset() as usize
    }

    fn at_end(&self) -> bool {
        self.c.at_end()
    }

    fn varint(&mut self) -> Result<u64, ProtoError> {
        let start = self.offset();
        let mut v: u64 = 0;
        for i in 0..10 {
            let Ok(b) = self.c.u8() else {
                return Err(self.err(start, "truncated varint"));
            };
            if i == 9 && b > 1 {
                return Err(self.err(start, "varint longer than 64 bits"));
            }
            v |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(self.err(start, "varint longer than 10 bytes"))
    }

    fn take(&mut self, n: u64, what: &str) -> Result<&'a [u8], ProtoError> {
        self.c.take(n).map_err(|short| {
            self.err(
                short.offset as usize,
                format!("{what} needs {n} bytes but only {} remain", short.available),
            )
        })
    }

    /// The next field: (field number, value, offset of its key).
    fn field(&mut self) -> Result<(u64, Field<'a>, usize), ProtoError> {
        let key_at = self.offset();
        let key = self.varint()?;
        let number = key >> 3;
        let wire = (key & 7) as u8;
        if number == 0 {
            return Err(self.err(key_at, "field number 0"));
        }
        let value = match wire {
            VARINT => Field::Varint(self.varint()?),
            FIXED64 => {
                self.take(8, "a 64-bit field")?;
                Field::Fixed64
            }
            FIXED32 => {
                let b = self.take(4, "a 32-bit field")?;
                Field::Fixed32(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            }
            LEN => {
                let len = self.varint()?;
                let start = self.offset();
                let b = self.take(len, &format!("field {number}"))?;
                Field::Bytes(b, start)
            }
            3 | 4 => {
                return Err(self.err(
                    key_at,
                    format!("field {number} uses the deprecated group wire type {wire}"),
                ))
            }
            _ => return Err(self.err(key_at, format!("field {number}: bad wire type {wire}"))),
        };
        Ok((number, value, key_at))
    }
}

fn as_varint(f: &Field<'_>, r: &Reader<'_>, at: usize, what: &str) -> Result<u64, ProtoError> {
    match f {
        Field::Varint(v) => Ok(*v),
        _ => Err(r.err(at, format!("{what} is not a varint"))),
    }
}

fn as_bytes<'a>(
    f: &Field<'a>,
    r: &Reader<'_>,
    at: usize,
    what: &str,
) -> Result<(&'a [u8], usize), ProtoError> {
    match f {
        Field::Bytes(b, base) => Ok((b, *base)),
        _ => Err(r.err(at, format!("{what} is not length-delimited"))),
    }
}

fn as_string(f: &Field<'_>, r: &Reader<'_>, at: usize, what: &str) -> Result<String, ProtoError> {
    let (b, _) = as_bytes(f, r, at, what)?;
    String::from_utf8(b.to_vec()).map_err(|e| r.err(at, format!("{what} is not UTF-8: {e}")))
}

/// Checks the framing of a message we do not interpret (its fields are not descended into,
/// so nesting cannot make this recurse).
fn skip_message(buf: &[u8], base: usize) -> Result<(), ProtoError> {
    let mut r = Reader::new(buf, base);
    while !r.at_end() {
        r.field()?;
    }
    Ok(())
}

fn parse_piece(buf: &[u8], base: usize) -> Result<Piece, ProtoError> {
    let mut r = Reader::new(buf, base);
    let mut piece = None;
    let mut score = 0.0f32;
    let mut kind = PieceType::Normal;
    while !r.at_end() {
        let (n, f, at) = r.field()?;
        match n {
            1 => piece = Some(as_string(&f, &r, at, "SentencePiece.piece")?),
            2 => match f {
                Field::Fixed32(bits) => score = f32::from_bits(bits),
                _ => return Err(r.err(at, "SentencePiece.score is not a 32-bit float")),
            },
            3 => kind = PieceType::from_wire(as_varint(&f, &r, at, "SentencePiece.type")?),
            _ => {}
        }
    }
    Ok(Piece {
        piece: piece.unwrap_or_default(),
        score,
        kind,
    })
}

fn parse_trainer_spec(buf: &[u8], base: usize, m: &mut SpmModel) -> Result<(), ProtoError> {
    let mut r = Reader::new(buf, base);
    while !r.at_end() {
        let (n, f, at) = r.field()?;
        match n {
            3 => m.model_type = Some(as_varint(&f, &r, at, "TrainerSpec.model_type")?),
            4 => m.vocab_size = Some(as_varint(&f, &r, at, "TrainerSpec.vocab_size")?),
            35 => m.byte_fallback = Some(as_varint(&f, &r, at, "TrainerSpec.byte_fallback")? != 0),
            40..=43 => {
                // int32 fields: negative values are sign-extended to 64 bits on the wire.
                let v = as_varint(&f, &r, at, "TrainerSpec special id")? as i64;
                m.special_ids[(n - 40) as usize] = Some(i64::from(v as i32));
            }
            45..=48 => {
                m.special_pieces[(n - 45) as usize] =
                    Some(as_string(&f, &r, at, "TrainerSpec special piece")?);
            }
            _ => {}
        }
    }
    Ok(())
}

fn parse_normalizer_spec(buf: &[u8], base: usize, m: &mut SpmModel) -> Result<(), ProtoError> {
    let mut r = Reader::new(buf, base);
    while !r.at_end() {
        let (n, f, at) = r.field()?;
        match n {
            1 => m.normalizer_name = Some(as_string(&f, &r, at, "NormalizerSpec.name")?),
            2 => {
                let (b, _) = as_bytes(&f, &r, at, "NormalizerSpec.precompiled_charsmap")?;
                m.precompiled_charsmap = b.to_vec();
            }
            3 => {
                m.add_dummy_prefix =
                    Some(as_varint(&f, &r, at, "NormalizerSpec.add_dummy_prefix")? != 0)
            }
            4 => {
                m.remove_extra_whitespaces =
                    Some(as_varint(&f, &r, at, "NormalizerSpec.remove_extra_whitespaces")? != 0)
            }
            _ => {}
        }
    }
    Ok(())
}

/// Decodes a `tokenizer.model`.
///
/// Besides the wire format it checks what `sentencepiece` refuses when it loads a model:
/// no pieces, an empty piece, a piece defined twice, and a vocabulary without exactly one
/// unknown piece.
pub fn parse_model(bytes: &[u8]) -> Result<SpmModel, ProtoError> {
    let mut r = Reader::new(bytes, 0);
    let mut m = SpmModel::default();
    let mut piece_offsets = Vec::new();
    while !r.at_end() {
        let (n, f, at) = r.field()?;
        match n {
            1 => {
                let (b, base) = as_bytes(&f, &r, at, "ModelProto.pieces")?;
                m.pieces.push(parse_piece(b, base)?);
                piece_offsets.push(at);
            }
            2 => {
                let (b, base) = as_bytes(&f, &r, at, "ModelProto.trainer_spec")?;
                parse_trainer_spec(b, base, &mut m)?;
            }
            3 => {
                let (b, base) = as_bytes(&f, &r, at, "ModelProto.normalizer_spec")?;
                parse_normalizer_spec(b, base, &mut m)?;
            }
            4 | 5 => {
                let (b, base) = as_bytes(&f, &r, at, "ModelProto sub-message")?;
                skip_message(b, base)?;
            }
            _ => {}
        }
    }
    if m.pieces.is_empty() {
        return Err(ProtoError {
            offset: 0,
            problem: "the model has no pieces (is this a SentencePiece model?)".into(),
        });
    }
    let mut seen = std::collections::HashMap::with_capacity(m.pieces.len());
    let mut unknown = 0usize;
    for (id, p) in m.pieces.iter().enumerate() {
        let at = piece_offsets[id] as u64;
        if p.piece.is_empty() {
            return Err(ProtoError {
                offset: at,
                problem: format!("piece {id} is empty"),
            });
        }
        if let Some(first) = seen.insert(p.piece.as_str(), id) {
            return Err(ProtoError {
                offset: at,
                problem: format!(
                    "piece {id} {:?} is already defined as piece {first}",
                    p.piece
                ),
            });
        }
        if p.kind == PieceType::Unknown {
            unknown += 1;
        }
    }
    if unknown != 1 {
        return Err(ProtoError {
            offset: 0,
            problem: format!("the model must define exactly one unknown piece, it has {unknown}"),
        });
    }
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn varint(mut v: u64, out: &mut Vec<u8>) {
        loop {
            let b = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                out.push(b);
                return;
            }
            out.push(b | 0x80);
        }
    }

    fn len_field(n: u64, body: &[u8], out: &mut Vec<u8>) {
        varint(n << 3 | 2, out);
        varint(body.len() as u64, out);
        out.extend_from_slice(body);
    }

    fn piece(text: &str, score: f32, kind: Option<u64>) -> Vec<u8> {
        let mut p = Vec::new();
        len_field(1, text.as_bytes(), &mut p);
        varint(2 << 3 | 5, &mut p);
        p.extend(score.to_le_bytes());
        if let Some(k) = kind {
            varint(3 << 3, &mut p);
            varint(k, &mut p);
        }
        p
    }

    fn model(pieces: &[Vec<u8>]) -> Vec<u8> {
        let mut m = Vec::new();
        for p in pieces {
            len_field(1, p, &mut m);
        }
        let mut ts = Vec::new();
        varint(3 << 3, &mut ts);
        varint(2, &mut ts);
        varint(40 << 3, &mut ts);
        varint((-1i64) as u64, &mut ts);
        len_field(2, &ts, &mut m);
        let mut ns = Vec::new();
        len_field(1, b"identity", &mut ns);
        varint(3 << 3, &mut ns);
        varint(0, &mut ns);
        len_field(3, &ns, &mut m);
        m
    }

    fn small() -> Vec<u8> {
        model(&[
            piece("<unk>", 0.0, Some(2)),
            piece("<s>", 0.0, Some(3)),
            piece("<0x0A>", 0.0, Some(6)),
            piece("\u{2581}a", -1.5, None),
            piece("odd", -2.0, Some(99)),
        ])
    }

    #[test]
    fn decodes_pieces_and_specs() {
        let m = parse_model(&small()).unwrap();
        assert_eq!(m.pieces.len(), 5);
        assert_eq!(m.pieces[0].kind, PieceType::Unknown);
        assert_eq!(m.pieces[1].kind, PieceType::Control);
        assert_eq!(m.pieces[2].kind, PieceType::Byte);
        assert_eq!(m.pieces[3].piece, "\u{2581}a");
        assert_eq!(m.pieces[3].score, -1.5);
        assert_eq!(m.pieces[3].kind, PieceType::Normal);
        assert_eq!(m.pieces[4].kind, PieceType::Normal, "unknown enum value");
        assert_eq!(m.model_type, Some(2));
        assert_eq!(m.special_ids[0], Some(-1));
        assert_eq!(m.normalizer_name.as_deref(), Some("identity"));
        assert_eq!(m.add_dummy_prefix, Some(false));
    }

    #[test]
    fn every_truncation_is_an_error_or_a_shorter_model() {
        let full = small();
        for cut in 0..full.len() {
            // Must not panic; a cut on a field boundary may still decode.
            let _ = parse_model(&full[..cut]);
        }
        assert!(parse_model(&full[..full.len() - 1]).is_err());
    }

    #[test]
    fn hostile_lengths_and_varints() {
        // A piece claiming 2^62 bytes.
        let mut b = Vec::new();
        varint(1 << 3 | 2, &mut b);
        varint(1 << 62, &mut b);
        b.extend_from_slice(&[0; 8]);
        let e = parse_model(&b).unwrap_err();
        assert!(e.problem.contains("only 8 remain"), "{e}");
        // An 11-byte varint.
        let e = parse_model(&[
            0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
        ])
        .unwrap_err();
        assert!(e.problem.contains("varint"), "{e}");
        // Group wire type.
        let e = parse_model(&[0x0b]).unwrap_err();
        assert!(e.problem.contains("group"), "{e}");
        // Field number 0.
        assert!(parse_model(&[0x00, 0x00]).is_err());
        // Garbage text is not a model.
        assert!(parse_model(b"this is not a protobuf at all").is_err());
        // No pieces.
        assert!(parse_model(&[]).unwrap_err().problem.contains("no pieces"));
    }

    #[test]
    fn sentencepiece_load_checks() {
        let dup = model(&[
            piece("<unk>", 0.0, Some(2)),
            piece("a", 0.0, None),
            piece("a", 0.0, None),
        ]);
        assert!(parse_model(&dup)
            .unwrap_err()
            .problem
            .contains("already defined"));
        let no_unk = model(&[piece("a", 0.0, None)]);
        assert!(parse_model(&no_unk)
            .unwrap_err()
            .problem
            .contains("unknown piece"));
        let empty = model(&[piece("<unk>", 0.0, Some(2)), piece("", 0.0, None)]);
        assert!(parse_model(&empty).unwrap_err().problem.contains("empty"));
        let mut bad_utf8 = Vec::new();
        let mut p = Vec::new();
        len_field(1, &[0xff, 0xfe], &mut p);
        len_field(1, &p, &mut bad_utf8);
        assert!(parse_model(&bad_utf8)
            .unwrap_err()
            .problem
            .contains("UTF-8"));
    }

    #[test]
    fn deep_nesting_is_not_descended() {
        // Field 4 (self_test_data) holding deeply nested messages: only its top level is
        // checked, so this neither recurses without bound nor fails.
        let mut inner = Vec::new();
        for _ in 0..10_000 {
            let mut outer = Vec::new();
            len_field(1, &inner, &mut outer);
            inner = outer;
            if inner.len() > 100_000 {
                break;
            }
        }
        let mut m = small();
        len_field(4, &inner, &mut m);
        assert!(parse_model(&m).is_ok());
    }
}
