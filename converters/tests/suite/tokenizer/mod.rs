//! Tokenizer metadata against llama.cpp's converter.

mod tokenizer_golden;
