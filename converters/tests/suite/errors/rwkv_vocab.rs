//! The RWKV World vocabulary file: a missing file or a line that disagrees with itself is a
//! typed error naming the file (and the line's byte offset), never a panic.

use ggufkit_testsupport::golden as support;

use ggufkit_converters::hf::{read_hf_dir, HfOptions, OutType};
use ggufkit_converters::ConvertError;
use support::{materialize_fixture as materialize, scratch};

const VOCAB: &str = "rwkv_vocab_v20230424.txt";

fn convert(dir: &std::path::Path) -> Result<(), ConvertError> {
    let opts = HfOptions {
        outtype: OutType::F32,
        ..HfOptions::default()
    };
    read_hf_dir(dir, &opts).map(|_| ())
}

#[test]
fn a_missing_world_vocabulary_names_the_file() {
    let work = scratch("rwkv-vocab-missing");
    let dir = materialize("rwkv6", &work);
    std::fs::remove_file(dir.join(VOCAB)).unwrap();
    match convert(&dir) {
        Err(ConvertError::MissingFile { path, .. }) => assert!(path.ends_with(VOCAB)),
        other => panic!("expected MissingFile, got {:?}", other.err()),
    }
}

#[test]
fn a_wrong_token_length_names_the_line_offset() {
    let work = scratch("rwkv-vocab-length");
    let dir = materialize("rwkv7", &work);
    let text = std::fs::read_to_string(dir.join(VOCAB)).unwrap();
    let first = text.lines().next().unwrap().len() + 1;
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines[1] = "2 'ab' 7".into();
    std::fs::write(dir.join(VOCAB), lines.join("\n") + "\n").unwrap();
    match convert(&dir) {
        Err(ConvertError::Format { path, offset, .. }) => {
            assert!(path.ends_with(VOCAB));
            assert_eq!(offset, Some(first as u64));
        }
        other => panic!("expected a format error, got {:?}", other.err()),
    }
}

#[test]
fn more_tokens_than_vocab_size_are_refused() {
    let work = scratch("rwkv-vocab-size");
    let dir = materialize("rwkv6", &work);
    let cfg = std::fs::read_to_string(dir.join("config.json")).unwrap();
    let cfg = cfg.replace("\"vocab_size\": 320", "\"vocab_size\": 100");
    std::fs::write(dir.join("config.json"), cfg).unwrap();
    assert!(matches!(
        convert(&dir),
        Err(ConvertError::Format { ref path, .. }) if path.ends_with(VOCAB)
    ));
}
