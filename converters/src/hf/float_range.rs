//! FLOAT32 values the reference cannot write.
//!
//! gguf-py packs a FLOAT32 (a scalar or an array element) with `struct.pack("<f", x)`, which
//! raises `OverflowError` for a finite value beyond f32's range (`lora_alpha: 1e300`,
//! `layer_norm_eps: 1e300`, an `image_mean` entry of 1e300): the reference refuses what a
//! plain cast would write as `inf`. JSON holds no infinities, so an infinite FLOAT32 in
//! metadata built from JSON always comes from such an overflow. Every converter path (text
//! models, LoRA adapters, projectors) runs [`refuse_f32_overflow`] on what it built.

use std::path::Path;

use ggufkit::gguf::{ArrayValue, Metadata, Value};

use crate::ConvertError;

/// Refuses metadata holding an infinite FLOAT32 (see the module documentation), naming the
/// key and `source`, the file the value came from.
pub fn refuse_f32_overflow(source: &Path, md: &Metadata) -> Result<(), ConvertError> {
    for (k, v) in md.iter() {
        let bad = match v {
            Value::F32(x) => x.is_infinite().then(|| k.to_string()),
            Value::Array(ArrayValue::F32(xs)) => xs
                .iter()
                .position(|x| x.is_infinite())
                .map(|i| format!("{k}[{i}]")),
            _ => None,
        };
        if let Some(at) = bad {
            return Err(ConvertError::format(
                source,
                None,
                format!(
                    "{at}: the value is too large for a FLOAT32 (the reference refuses it: \
                     float too large to pack)"
                ),
            ));
        }
    }
    Ok(())
}
