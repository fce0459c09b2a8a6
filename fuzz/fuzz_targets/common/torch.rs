//! Structure-aware PyTorch checkpoints: the fuzzer's bytes drive a generator of pickle
//! opcode sequences (whole tensor records, memo traffic, marks, tuples, reductions, globals
//! allowed and forbidden, raw opcodes) inside a well-formed `torch.save` zip archive with
//! storages whose sizes the bytes choose, so mutations reach the unpickler's and the
//! checkpoint reader's checks instead of stopping at the zip signature or the CRC.
#![allow(dead_code)]

use crate::bytes::Bytes;

/// Storage classes offered to the generator, with their element sizes.
const STORAGES: &[(&str, u64)] = &[
    ("FloatStorage", 4),
    ("HalfStorage", 2),
    ("BFloat16Storage", 2),
    ("LongStorage", 8),
    ("ByteStorage", 1),
    ("UntypedStorage", 1),
    ("ComplexFloatStorage", 8),
];

/// Globals offered to GLOBAL / STACK_GLOBAL: the allow-list and a few that must be refused.
const GLOBALS: &[(&str, &str)] = &[
    ("collections", "OrderedDict"),
    ("torch._utils", "_rebuild_tensor_v2"),
    ("torch._utils", "_rebuild_tensor_v3"),
    ("torch._utils", "_rebuild_parameter"),
    ("torch", "FloatStorage"),
    ("torch", "float16"),
    ("torch", "float8_e4m3fn"),
    ("torch.storage", "UntypedStorage"),
    ("posix", "system"),
    ("builtins", "eval"),
    ("torch", "uint16"),
];

/// A pickle under construction.
struct Pickle {
    out: Vec<u8>,
    /// Storages: (key, class index, numel).
    storages: Vec<(String, usize, u64)>,
}

impl Pickle {
    fn op(&mut self, b: u8) {
        self.out.push(b);
    }
    fn str(&mut self, s: &str) {
        if s.len() < 256 && s.len() % 2 == 0 {
            self.out.push(0x8c); // SHORT_BINUNICODE
            self.out.push(s.len() as u8);
        } else {
            self.out.push(b'X'); // BINUNICODE
            self.out.extend((s.len() as u32).to_le_bytes());
        }
        self.out.extend(s.as_bytes());
    }
    fn int(&mut self, v: u64) {
        match v {
            0..=0xff => {
                self.out.push(b'K');
                self.out.push(v as u8);
            }
            0x100..=0xffff => {
                self.out.push(b'M');
                self.out.extend((v as u16).to_le_bytes());
            }
            _ => {
                self.out.push(0x8a); // LONG1
                self.out.push(8);
                self.out.extend(v.to_le_bytes());
            }
        }
    }
    fn global(&mut self, (module, name): (&str, &str)) {
        self.out.push(b'c');
        self.out.extend(module.as_bytes());
        self.out.push(b'\n');
        self.out.extend(name.as_bytes());
        self.out.push(b'\n');
    }
    fn empty_ordered_dict(&mut self) {
        self.global(GLOBALS[0]);
        self.op(b')');
        self.op(b'R');
    }
    fn ints(&mut self, v: &[u64]) {
        self.op(b'(');
        for &x in v {
            self.int(x);
        }
        self.op(b't');
    }

    /// A tensor record (`_rebuild_tensor_v2/v3(...)`, maybe wrapped in
    /// `_rebuild_parameter`), mostly valid, with input-chosen flaws.
    fn tensor(&mut self, b: &mut Bytes) {
        let flags = b.u8();
        let param = flags & 1 != 0;
        let v3 = flags & 2 != 0;
        if param {
            self.global(GLOBALS[3]);
        }
        self.global(GLOBALS[if v3 { 2 } else { 1 }]);
        self.op(b'(');
        // The persistent id of a storage.
        let si = if self.storages.is_empty() {
            0
        } else {
            b.u8() as usize % self.storages.len()
        };
        let (key, class, numel) = self
            .storages
            .get(si)
            .cloned()
            .unwrap_or(("0".into(), 0, 0));
        self.op(b'(');
        self.str("storage");
        self.global(("torch", STORAGES[class].0));
        self.str(&key);
        self.str("cpu");
        self.int(if flags & 4 != 0 { numel + b.u8() as u64 } else { numel });
        self.op(b't');
        self.op(b'Q');
        // Offset, shape, contiguous strides (sometimes transposed).
        let ndim = (b.u8() % 4) as usize;
        let shape: Vec<u64> = (0..ndim).map(|_| (b.u8() % 9) as u64).collect();
        let mut stride = vec![1u64; ndim];
        for i in (0..ndim.saturating_sub(1)).rev() {
            stride[i] = stride[i + 1] * shape[i + 1].max(1);
        }
        if flags & 8 != 0 {
            stride.reverse();
        }
        self.int(if flags & 16 != 0 { b.u8() as u64 } else { 0 });
        self.ints(&shape);
        self.ints(&stride);
        self.op(0x89); // NEWFALSE: requires_grad
        self.empty_ordered_dict();
        if v3 {
            self.global(GLOBALS[if flags & 32 != 0 { 6 } else { 5 }]);
        }
        self.op(b't');
        self.op(b'R');
        if param {
            self.op(0x89);
            self.empty_ordered_dict();
            self.op(0x87); // TUPLE3
            self.op(b'R');
        }
    }
}

/// A `torch.save`-like pickle driven by `b`.
fn pickle(b: &mut Bytes, storages: Vec<(String, usize, u64)>) -> Vec<u8> {
    let mut p = Pickle {
        out: vec![0x80, 2],
        storages,
    };
    if b.u8() & 1 == 0 {
        p.op(b'}');
    } else {
        p.empty_ordered_dict();
    }
    let mut steps = 0;
    while !b.0.is_empty() && steps < 4096 {
        steps += 1;
        match b.u8() % 26 {
            0..=3 => {
                let key = b.text();
                p.str(&key);
                p.tensor(b);
                p.op(b's');
            }
            4 => p.tensor(b),
            5 => {
                p.op(b'q');
                p.op(b.u8() % 8);
            }
            6 => {
                p.op(b'h');
                p.op(b.u8() % 8);
            }
            7 => p.op(b'('),
            8 => p.op(b'u'),
            9 => p.op(b't'),
            10 => p.op(b's'),
            11 => p.op(b'0'),
            12 => p.op(b'R'),
            13 => p.op(b'Q'),
            14 => p.op(b'b'),
            15 => {
                let s = b.text();
                p.str(&s);
            }
            16 => {
                let v = b.u32() as u64;
                p.int(v);
            }
            17 => p.op([b')', b'}', b'N', 0x88, 0x89][b.u8() as usize % 5]),
            18 => p.op(0x85 + b.u8() % 3),
            19 => {
                let g = GLOBALS[b.u8() as usize % GLOBALS.len()];
                p.global(g);
            }
            20 => p.op(0x94),
            21 => {
                let g = GLOBALS[b.u8() as usize % GLOBALS.len()];
                p.str(g.0);
                p.str(g.1);
                p.op(0x93);
            }
            22 => {
                p.op(if b.u8() & 1 == 0 { b'j' } else { b'r' });
                let i = b.u32() % 16;
                p.out.extend(i.to_le_bytes());
            }
            23 => {
                p.op(b'G');
                p.out.extend(b.take(8));
            }
            24 => p.op(b.u8()),
            _ => {
                // A burst of entries sharing one memoized tensor.
                p.tensor(b);
                p.op(b'q');
                p.op(7);
                p.op(b'0');
                for i in 0..(b.u8() % 16) {
                    p.str(&format!("k{i}"));
                    p.op(b'h');
                    p.op(7);
                    p.op(b's');
                }
            }
        }
    }
    p.op(b'.');
    p.out
}

/// One archive member: name and bytes.
type Member = (String, Vec<u8>);

/// A stored (uncompressed) zip archive of `members`, data 64-byte aligned as torch writes.
fn zip(members: &[Member]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    for (name, data) in members {
        let header_at = out.len() as u32;
        let crc = ggufkit_converters::torch::zip::crc32(data);
        let pad = (64 - (out.len() + 30 + name.len() + 4) % 64) % 64;
        out.extend(0x0403_4b50u32.to_le_bytes());
        out.extend([20, 0, 0, 0, 0, 0, 0, 0, 0, 0]); // version, flags, method, time, date
        out.extend(crc.to_le_bytes());
        out.extend((data.len() as u32).to_le_bytes());
        out.extend((data.len() as u32).to_le_bytes());
        out.extend((name.len() as u16).to_le_bytes());
        out.extend(((pad + 4) as u16).to_le_bytes());
        out.extend(name.as_bytes());
        out.extend(0xcafeu16.to_le_bytes());
        out.extend((pad as u16).to_le_bytes());
        out.extend(std::iter::repeat_n(0u8, pad));
        out.extend(data);
        central.extend(0x0201_4b50u32.to_le_bytes());
        central.extend([20, 0, 20, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        central.extend(crc.to_le_bytes());
        central.extend((data.len() as u32).to_le_bytes());
        central.extend((data.len() as u32).to_le_bytes());
        central.extend((name.len() as u16).to_le_bytes());
        central.extend([0u8; 12]); // extra, comment, disk, attributes
        central.extend(header_at.to_le_bytes());
        central.extend(name.as_bytes());
    }
    let cd_at = out.len() as u32;
    out.extend(&central);
    out.extend(0x0605_4b50u32.to_le_bytes());
    out.extend([0u8; 4]);
    out.extend((members.len() as u16).to_le_bytes());
    out.extend((members.len() as u16).to_le_bytes());
    out.extend((central.len() as u32).to_le_bytes());
    out.extend(cd_at.to_le_bytes());
    out.extend([0u8; 2]);
    out
}

/// A checkpoint file generated from the fuzzer's bytes.
pub fn checkpoint(data: &[u8]) -> Vec<u8> {
    let mut b = Bytes(data);
    let n = 1 + (b.u8() % 3) as usize;
    let storages: Vec<(String, usize, u64)> = (0..n)
        .map(|i| {
            let class = b.u8() as usize % STORAGES.len();
            let numel = (b.u8() % 80) as u64;
            let key = if b.u8() % 16 == 0 {
                b.text()
            } else {
                i.to_string()
            };
            (key, class, numel)
        })
        .collect();
    let order_big = b.u8() % 32 == 0;
    let mut members: Vec<Member> = vec![(
        "archive/data.pkl".into(),
        pickle(&mut b, storages.clone()),
    )];
    members.push((
        "archive/byteorder".into(),
        if order_big { b"big".to_vec() } else { b"little".to_vec() },
    ));
    for (key, class, numel) in &storages {
        let len = numel * STORAGES[*class].1;
        members.push((format!("archive/data/{key}"), vec![0x3c; len as usize]));
    }
    members.push(("archive/version".into(), b"3\n".to_vec()));
    zip(&members)
}
