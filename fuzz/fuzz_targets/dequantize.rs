//! Every dequantizer on arbitrary block bytes: no panic, and the output has the right length.
#![no_main]

use ggufkit_quantizers::{all_types, dequantize_rows};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&sel, rest)) = data.split_first() else { return };
    let types: Vec<_> = all_types().filter(|t| t.dequantize.is_some()).collect();
    let t = types[sel as usize % types.len()];
    let blocks = rest.len() / t.type_size;
    let src = &rest[..blocks * t.type_size];
    let mut out = vec![0f32; blocks * t.block_size];
    dequantize_rows(t.ty, src, &mut out).expect("whole blocks always dequantize");
});
