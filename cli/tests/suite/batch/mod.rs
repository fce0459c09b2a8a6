//! Several outputs in one run: `--outtype a,b,c`, `--batch` jobs and their shards.

mod batch_cli;
mod batch_shard;
