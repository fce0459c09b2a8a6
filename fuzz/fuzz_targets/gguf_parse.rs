//! GGUF reader: any bytes give a file or a clean error; a parsed file survives every
//! consumer (manifest, verify, dump, re-serialisation) and re-parses to the same content.
#![no_main]

use ggufkit::gguf::{layout, GgufFile};
use ggufkit::inspect::{dump_text, verify_file};
use ggufkit::ir::Model;
use ggufkit::mapped::FileBytes;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(file) = GgufFile::parse(FileBytes::from_vec(data.to_vec())) else { return };
    let _ = ggufkit::manifest::manifest(&file, std::path::Path::new("fuzz.gguf"), None);
    let _ = verify_file(&file);
    let _ = dump_text(&file, "fuzz.gguf");
    let model = Model::from_gguf(&file);
    if let Ok(plan) = layout(&model.metadata, &model.headers()) {
        let mut out = Vec::new();
        ggufkit::write::write_stream(&model, &plan, &mut out, &Default::default()).expect("in-memory write");
        let again = GgufFile::parse(FileBytes::from_vec(out)).expect("our own output parses");
        assert_eq!(again.metadata.len(), file.metadata.len());
        assert_eq!(again.tensors.len(), file.tensors.len());
    }
});
