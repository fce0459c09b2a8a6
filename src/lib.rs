//! ggufkit core
