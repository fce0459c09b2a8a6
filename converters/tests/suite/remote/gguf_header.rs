//! A GGUF read on demand (a URL): its header is read in growing pieces, at most 64 MiB, so a
//! hostile header claiming a huge string is refused within bounded memory; a remote file has
//! no whole-file slice (a typed error, never an empty one).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use ggufkit::gguf::{FormatError, GgufError, GgufFile, MAX_REMOTE_HEADER};
use ggufkit::mapped::{FileBytes, RangeRead};

/// A remote file of `size` bytes: `head`, then zeros; the largest read is recorded.
struct Fake {
    head: Vec<u8>,
    size: u64,
    largest: Arc<AtomicU64>,
}

impl RangeRead for Fake {
    fn size(&self) -> u64 {
        self.size
    }
    fn read_range(&self, offset: u64, len: usize) -> std::io::Result<Vec<u8>> {
        self.largest.fetch_max(len as u64, Ordering::Relaxed);
        Ok((offset..offset + len as u64)
            .map(|i| self.head.get(i as usize).copied().unwrap_or(0))
            .collect())
    }
    fn name(&self) -> &str {
        "http://127.0.0.1:1/hostile.gguf"
    }
}

#[test]
fn a_remote_header_claiming_a_huge_string_stops_at_the_limit() {
    // GGUF v3, no tensor, one key "a" of type string (8) whose length is 1 GiB, in a file of
    // 4 GiB: every count is plausible for the file, the header never ends.
    let mut head = b"GGUF".to_vec();
    head.extend(3u32.to_le_bytes());
    head.extend(0u64.to_le_bytes());
    head.extend(1u64.to_le_bytes());
    head.extend(1u64.to_le_bytes());
    head.push(b'a');
    head.extend(8u32.to_le_bytes());
    head.extend((1u64 << 30).to_le_bytes());
    let largest = Arc::new(AtomicU64::new(0));
    let file = FileBytes::remote(Box::new(Fake {
        head,
        size: 4 << 30,
        largest: largest.clone(),
    }));
    let e = GgufFile::parse(file.clone()).expect_err("a header larger than the limit");
    assert!(
        matches!(
            &e,
            GgufError::Format { error: FormatError::HeaderTooLarge { limit }, .. }
                if *limit == MAX_REMOTE_HEADER
        ),
        "{e}"
    );
    assert!(
        e.to_string().contains("http://127.0.0.1:1/hostile.gguf"),
        "{e}"
    );
    assert!(largest.load(Ordering::Relaxed) <= MAX_REMOTE_HEADER);
    // No whole-file slice of a remote file: a typed error naming it.
    let not_local = file.local().expect_err("a remote file has no slice");
    assert_eq!(not_local.name, "http://127.0.0.1:1/hostile.gguf");
}
