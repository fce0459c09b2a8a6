//! User-supplied regular expressions (`--tensor-type`, `--tensor-type-file`, a batch job's
//! `tensor_type`, gguf-edit's `--remove-matching`) compiled under one memory budget for all
//! of them.
//!
//! The regex engine bounds each compiled pattern (10 MiB by default), but nothing bounds
//! their sum: 400 lines of `pN[a-z]{120000}=q8_0` (9 KB of text) would compile to gigabytes.
//! So every pattern of a run is compiled against one [`PatternBudget`]: first with a small
//! size limit, and again with a limit 8 times larger each time it does not fit, up to the
//! engine's default; the limit it compiled under is charged to the budget (an upper bound of
//! what it holds, its lazy matching cache included). A pattern that would take more than is
//! left is refused, naming the budget. The patterns' meaning is the engine's usual one.

use regex::{Regex, RegexBuilder};

/// Memory all the patterns of one run may take together.
pub const PATTERN_BUDGET: usize = 256 << 20;

/// The size limit a pattern is first compiled under: a literal tensor name or a short
/// expression fits, so 16,384 of them take at most 128 MiB with their caches.
const FIRST_LIMIT: usize = 4 << 10;

/// The largest size limit of one pattern (the regex engine's default).
const LAST_LIMIT: usize = 10 << 20;

/// Why a pattern cannot be compiled.
#[derive(Debug, Clone, thiserror::Error)]
pub enum PatternError {
    /// The regex engine refuses it (syntax, or larger than one pattern may be).
    #[error(transparent)]
    Invalid(#[from] regex::Error),
    /// It does not fit in what is left of the budget.
    #[error(
        "the patterns together would take more than {} MiB compiled; use fewer or simpler patterns",
        .total >> 20
    )]
    OverBudget {
        /// The whole budget, in bytes.
        total: usize,
    },
}

/// What is left of the memory the patterns of one run may take.
#[derive(Debug, Clone)]
pub struct PatternBudget {
    total: usize,
    left: usize,
}

impl Default for PatternBudget {
    fn default() -> Self {
        PatternBudget::new(PATTERN_BUDGET)
    }
}

impl PatternBudget {
    /// A budget of `total` bytes.
    pub fn new(total: usize) -> PatternBudget {
        PatternBudget { total, left: total }
    }

    /// Bytes left.
    pub fn left(&self) -> usize {
        self.left
    }

    /// Compiles `pattern`, charging the size limit it compiled under.
    pub fn compile(&mut self, pattern: &str) -> Result<Regex, PatternError> {
        let mut limit = FIRST_LIMIT;
        loop {
            let cost = 2 * limit; // the program and its lazy matching cache
            if cost > self.left {
                return Err(PatternError::OverBudget { total: self.total });
            }
            match RegexBuilder::new(pattern)
                .size_limit(limit)
                .dfa_size_limit(limit)
                .build()
            {
                Ok(re) => {
                    self.left -= cost;
                    return Ok(re);
                }
                Err(regex::Error::CompiledTooBig(_)) if limit < LAST_LIMIT => {
                    limit = (limit * 8).min(LAST_LIMIT);
                }
                Err(e) => return Err(e.into()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_patterns_are_cheap_and_large_ones_share_one_budget() {
        let mut b = PatternBudget::default();
        for i in 0..16_384 {
            b.compile(&format!(r"blk\.{i}\.attn_(q|k|v)\.weight"))
                .unwrap();
        }
        assert!(b.left() > 0);
        let mut b = PatternBudget::default();
        let mut n = 0;
        let e = loop {
            match b.compile(&format!("p{n}[a-z]{{120000}}")) {
                Ok(_) => n += 1,
                Err(e) => break e,
            }
        };
        assert!(matches!(e, PatternError::OverBudget { .. }), "{e}");
        assert!(n < 20, "{n} huge patterns compiled");
        assert!(e.to_string().contains("256 MiB"), "{e}");
        // Matching is the engine's usual.
        let re = PatternBudget::default().compile("attn_v").unwrap();
        assert!(re.is_match("blk.0.attn_v.weight"));
        assert!(matches!(
            PatternBudget::default().compile("("),
            Err(PatternError::Invalid(_))
        ));
    }
}
