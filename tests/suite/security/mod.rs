//! Hostile inputs of the core's readers (GGUF, split sets, importance matrices, tensor-type
//! files): each refused with a typed error naming what is at fault, never a panic, a hang or
//! an allocation sized by an untrusted count, also in a child under a memory limit.

mod hardening_reader;
mod hostile_gguf;
mod hostile_imatrix;
mod hostile_split;
