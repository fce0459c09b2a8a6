//! Helpers shared by the structure-aware fuzz targets.
#![allow(dead_code)]

/// Reads the input front to back; zeros once it runs out.
pub struct Bytes<'a>(pub &'a [u8]);

impl Bytes<'_> {
    pub fn u8(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }
    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.u8(), self.u8(), self.u8(), self.u8()])
    }
    pub fn take(&mut self, n: usize) -> Vec<u8> {
        let n = n.min(self.0.len());
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        a.to_vec()
    }
    pub fn text(&mut self) -> String {
        let n = (self.u8() % 8) as usize;
        String::from_utf8_lossy(&self.take(n)).into_owned()
    }
}

/// Standard padded base64 (tokenizer.json's `precompiled_charsmap`).
pub fn b64(b: &[u8]) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::new();
    for c in b.chunks(3) {
        let v = c.iter().fold(0u32, |a, &x| a << 8 | x as u32) << (8 * (3 - c.len()));
        for i in 0..=c.len() {
            s.push(A[(v >> (18 - 6 * i) & 63) as usize] as char);
        }
        for _ in c.len()..3 {
            s.push('=');
        }
    }
    s
}
