//! The batch engine: many outputs of one source in one pass equal each output written alone.

mod batch_engine;
