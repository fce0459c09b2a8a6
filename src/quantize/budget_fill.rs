//! Spending what a budget allocation leaves unused.
//!
//! An allocation that minimises one error under a second constraint (the cap at
//! llama-quantize's error, [`super::budget::allocate_capped`]) can stop short of the budget:
//! a tensor whose capped error does not count (an imatrix-weighted total leaves out the
//! tensors the imatrix has no entry for, such as the token embedding) never gains from more
//! bytes in that total, and an allocation minimising it leaves such a tensor at its cheapest
//! type. [`fill`] then spends the bytes left on the upgrades that lower the metric without
//! raising the capped error, and [`Slack`] says why any bytes beyond [`SLACK_TOLERANCE`] of
//! the budget stay unused.

use super::budget::Choice;

/// The share of the budget a choice may leave unused without a reason being reported.
pub const SLACK_TOLERANCE: f64 = 0.01;

/// Bytes of a budget left unused, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slack {
    /// Bytes of the budgeted tensors' limit not used.
    pub unused: u64,
    /// Why no larger type was taken.
    pub reason: SlackReason,
}

/// Why bytes stay unused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlackReason {
    /// No tensor has a larger candidate type that fits in the bytes left.
    NothingFits,
    /// Some larger types fit, but each measures a higher error (in the metric or in the
    /// capped total) than the type chosen.
    LargerIsWorse {
        /// Tensors with a larger type that fits.
        tensors: usize,
    },
}

impl std::fmt::Display for Slack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.reason {
            SlackReason::NothingFits => write!(
                f,
                "{} bytes unused: no tensor's next larger type fits in them",
                self.unused
            ),
            SlackReason::LargerIsWorse { tensors } => write!(
                f,
                "{} bytes unused: the larger types that fit ({tensors} tensors) all measure a \
                 higher error than the types chosen",
                self.unused
            ),
        }
    }
}

/// Upgrades `choice` within `remaining` bytes: repeatedly the upgrade (a costlier option of
/// one tensor) that saves the most metric error per byte, among those that raise neither
/// the metric error nor the `capped` error; ties (options whose measured errors are equal,
/// as on weights that already lie on a quantization grid) go to the tensor whose current
/// error is largest. Returns the bytes still unused.
///
/// `tensors[i][k]` is tensor `i`'s option `k`; `capped[i][k]` its error in the capped total.
pub fn fill(
    tensors: &[Vec<Choice>],
    capped: &[Vec<f64>],
    choice: &mut [usize],
    mut remaining: u64,
) -> u64 {
    loop {
        // (metric saved per byte, capped saved per byte, current error, tensor, option, bytes)
        let mut best: Option<(f64, f64, f64, usize, usize, u64)> = None;
        for (i, opts) in tensors.iter().enumerate() {
            let k = choice[i];
            let cur = opts[k];
            let cur_capped = capped.get(i).and_then(|c| c.get(k)).copied().unwrap_or(0.0);
            for (j, o) in opts.iter().enumerate() {
                if o.cost <= cur.cost || o.cost - cur.cost > remaining || o.error > cur.error {
                    continue;
                }
                let c = capped.get(i).and_then(|c| c.get(j)).copied().unwrap_or(0.0);
                if c > cur_capped {
                    continue;
                }
                let dc = (o.cost - cur.cost) as f64;
                let key = ((cur.error - o.error) / dc, (cur_capped - c) / dc, cur.error);
                let better = best.is_none_or(|(g, h, e, ..)| {
                    (key.0, key.1, key.2)
                        .partial_cmp(&(g, h, e))
                        .is_some_and(|o| o.is_gt())
                });
                if better {
                    best = Some((key.0, key.1, key.2, i, j, o.cost - cur.cost));
                }
            }
        }
        let Some((.., i, j, dc)) = best else {
            return remaining;
        };
        choice[i] = j;
        remaining -= dc;
    }
}

/// Why `unused` bytes of a `budget`-byte target stay unused after [`fill`], when they are
/// more than [`SLACK_TOLERANCE`] of it; `None` when the choice uses the budget.
pub fn slack(tensors: &[Vec<Choice>], choice: &[usize], unused: u64, budget: u64) -> Option<Slack> {
    if (unused as f64) <= SLACK_TOLERANCE * budget as f64 {
        return None;
    }
    let tensors_with_larger = tensors
        .iter()
        .zip(choice)
        .filter(|(opts, &k)| {
            opts.iter()
                .any(|o| o.cost > opts[k].cost && o.cost - opts[k].cost <= unused)
        })
        .count();
    let reason = if tensors_with_larger == 0 {
        SlackReason::NothingFits
    } else {
        SlackReason::LargerIsWorse {
            tensors: tensors_with_larger,
        }
    };
    Some(Slack { unused, reason })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(cost: u64, error: f64) -> Choice {
        Choice { cost, error }
    }

    #[test]
    fn fill_spends_bytes_on_a_tensor_the_capped_total_leaves_out() {
        // Tensor 0 (an embedding without imatrix entry): its capped error is 0 whatever its
        // type, so an allocation minimising the capped total leaves it at its cheapest.
        let tensors = vec![
            vec![c(100, 8.0), c(200, 2.0), c(300, 1.0)],
            vec![c(50, 4.0), c(80, 1.0)],
        ];
        let capped = vec![vec![0.0, 0.0, 0.0], vec![4.0, 1.0]];
        let mut choice = vec![0, 1];
        let left = fill(&tensors, &capped, &mut choice, 220);
        assert_eq!(choice, vec![2, 1]);
        assert_eq!(left, 20);
    }

    #[test]
    fn fill_never_raises_the_capped_error_or_the_metric() {
        let tensors = vec![vec![c(10, 5.0), c(20, 6.0), c(30, 4.0)]];
        // Option 2 lowers the metric but raises the capped error: not taken.
        let capped = vec![vec![1.0, 1.0, 2.0]];
        let mut choice = vec![0];
        assert_eq!(fill(&tensors, &capped, &mut choice, 100), 100);
        assert_eq!(choice, vec![0]);
        let why = slack(&tensors, &choice, 100, 1000).expect("10% unused");
        assert_eq!(why.reason, SlackReason::LargerIsWorse { tensors: 1 });
        assert!(why.to_string().contains("100 bytes unused"), "{why}");
    }

    #[test]
    fn equal_errors_still_take_the_bytes_largest_error_first() {
        // Weights on a quantization grid: the larger types measure the same error.
        let tensors = vec![vec![c(10, 1.0), c(20, 1.0)], vec![c(10, 3.0), c(20, 3.0)]];
        let capped = vec![vec![0.0; 2], vec![0.0; 2]];
        let mut choice = vec![0, 0];
        assert_eq!(fill(&tensors, &capped, &mut choice, 10), 0);
        assert_eq!(choice, vec![0, 1]);
    }

    #[test]
    fn slack_within_tolerance_or_with_nothing_fitting() {
        let tensors = vec![vec![c(10, 2.0), c(500, 1.0)]];
        assert_eq!(slack(&tensors, &[0], 5, 1000), None);
        let why = slack(&tensors, &[0], 100, 1000).expect("10% unused");
        assert_eq!(why.reason, SlackReason::NothingFits);
        assert!(why.to_string().contains("fits"), "{why}");
    }
}
