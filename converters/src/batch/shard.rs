//! Deterministic slices of a jobs list (`gguf-convert --batch jobs.toml --shard K/N`), so that
//! a CI matrix, a Kubernetes indexed Job or a Slurm array converts a catalogue in parallel with
//! no coordinator: every runner computes the same slices from the same file.
//!
//! Slices are balanced by source size: jobs in decreasing size (ties in file order) go one
//! by one to the slice with the fewest bytes so far (ties to the lower slice), then each
//! slice lists its jobs in file order.

use std::path::Path;

use serde_json::{json, Value as Json};

use super::jobs::JobSpec;
use super::plan::PlanError;

/// `K/N` (1 ≤ K ≤ N): the K-th of N slices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// Which slice, from 1.
    pub index: usize,
    /// How many slices.
    pub count: usize,
}

impl Shard {
    /// Parses `K/N`.
    pub fn parse(s: &str) -> Result<Shard, PlanError> {
        let bad = || PlanError::InvalidShard(s.to_string());
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count) = (
            k.trim().parse().map_err(|_| bad())?,
            n.trim().parse().map_err(|_| bad())?,
        );
        if index == 0 || count == 0 || index > count || count > 1 << 16 {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

/// Bytes of a source: a file's size, or the sizes of the files directly in a directory.
pub fn source_bytes(p: &Path) -> u64 {
    match std::fs::metadata(p) {
        Ok(m) if m.is_dir() => std::fs::read_dir(p)
            .map(|rd| {
                rd.flatten()
                    .filter_map(|e| std::fs::metadata(e.path()).ok())
                    .filter(|m| m.is_file())
                    .map(|m| m.len())
                    .fold(0u64, u64::saturating_add)
            })
            .unwrap_or(0),
        Ok(m) => m.len(),
        Err(_) => 0,
    }
}

/// For each of `count` slices, the indices (in file order) of the jobs whose sizes are
/// `bytes`.
pub fn slices(bytes: &[u64], count: usize) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..bytes.len()).collect();
    order.sort_by(|&a, &b| bytes[b].cmp(&bytes[a]).then(a.cmp(&b)));
    let mut load = vec![0u64; count.max(1)];
    let mut out = vec![Vec::new(); count.max(1)];
    for j in order {
        let s = (0..load.len())
            .min_by_key(|&s| (load[s], s))
            .expect("at least one slice");
        load[s] = load[s].saturating_add(bytes[j]);
        out[s].push(j);
    }
    for s in &mut out {
        s.sort_unstable();
    }
    out
}

/// The jobs of slice `shard`.
pub fn select(jobs: Vec<JobSpec>, shard: Shard) -> Vec<JobSpec> {
    let bytes: Vec<u64> = jobs.iter().map(|j| source_bytes(&j.source)).collect();
    let keep = &slices(&bytes, shard.count)[shard.index - 1];
    jobs.into_iter()
        .enumerate()
        .filter(|(i, _)| keep.binary_search(i).is_ok())
        .map(|(_, j)| j)
        .collect()
}

/// The slices as JSON, for a scheduler to read (`--plan --json`).
pub fn plan_json(jobs: &[JobSpec], count: usize) -> Json {
    let bytes: Vec<u64> = jobs.iter().map(|j| source_bytes(&j.source)).collect();
    let slices = slices(&bytes, count);
    json!({
        "jobs": jobs.len(),
        "shards": slices.iter().enumerate().map(|(k, s)| json!({
            "shard": format!("{}/{}", k + 1, count),
            "source_bytes": s.iter().map(|&j| bytes[j]).fold(0u64, u64::saturating_add),
            "jobs": s.iter().map(|&j| json!({
                "index": j + 1,
                "label": jobs[j].label,
                "source": jobs[j].source,
                "source_bytes": bytes[j],
                "outputs": jobs[j].outputs.iter().map(|o| o.outtype.clone()).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_are_balanced_deterministic_and_cover_every_job_once() {
        let bytes = [10, 70, 30, 30, 50, 5, 0];
        let s = slices(&bytes, 3);
        assert_eq!(s, slices(&bytes, 3));
        let mut all: Vec<usize> = s.iter().flatten().copied().collect();
        all.sort_unstable();
        assert_eq!(all, (0..bytes.len()).collect::<Vec<_>>());
        let loads: Vec<u64> = s
            .iter()
            .map(|v| v.iter().map(|&j| bytes[j]).sum())
            .collect();
        assert_eq!(loads, vec![70, 65, 60]);
        assert_eq!(slices(&bytes, 1), vec![(0..7).collect::<Vec<_>>()]);
        // More slices than jobs: some are empty.
        assert_eq!(
            slices(&[1, 2], 4).iter().filter(|s| s.is_empty()).count(),
            2
        );
    }

    #[test]
    fn shard_syntax() {
        assert_eq!(Shard::parse("2/5").unwrap(), Shard { index: 2, count: 5 });
        for bad in ["0/3", "4/3", "3", "a/b", "1/0", ""] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
    }
}
