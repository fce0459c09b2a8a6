//! The GGUF container read and written back: byte-identical round trips, our manifests of the
//! golden files equal llama.cpp's, and gguf-py reads our files as we do.

mod interop;
mod roundtrip;
