//! Legacy GGML / GGMF / GGJT llama `.bin` files → model IR (to be written).
