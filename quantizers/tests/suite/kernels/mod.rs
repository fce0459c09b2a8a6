//! The block kernels against llama.cpp's quantization vectors, bit for bit.

mod golden_vectors;
