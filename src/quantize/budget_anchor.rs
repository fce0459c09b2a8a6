//! A budget anchored on llama-quantize's own mix: bytes move only where the estimate is
//! confident.
//!
//! Without activation statistics, a metric's estimate of each tensor's effect on the output
//! is rough, and a free allocation that trusts it everywhere can lose to llama-quantize's
//! hand-made mix. [`anchored`] starts from the mix instead and makes only the trades the
//! estimate backs by a margin: one tensor takes a cheaper type and another a costlier one
//! when the error the upgrade saves is at least `margin` times what the downgrade adds (by
//! default none: [`ANCHOR_MARGIN`]). The bytes still left are spent by
//! [`super::budget_fill::fill`].

use super::budget::Choice;

/// How many times the error an upgrade saves must exceed what the downgrade paying for it
/// adds, for [`anchored`] to trade bytes between two tensors: infinite, so the budget makes
/// no trades and keeps the mix (spending only the bytes left over). Measured on a real model
/// (SmolLM2-135M-Instruct at Q3_K_M's size, no imatrix, `scripts/bench-budget-real.sh`), the
/// trades a margin of 2 allows raised llama-perplexity's KL divergence from the mix's 0.147
/// to 0.224: without activation statistics the estimate is not reliable enough to move
/// bytes between tensors.
pub const ANCHOR_MARGIN: f64 = f64::INFINITY;

/// The most trades [`anchored`] makes per budgeted tensor (it stops earlier when no trade
/// passes the margin).
const TRADES_PER_TENSOR: usize = 2;

/// Which allocation a budget uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Anchor {
    /// [`Anchor::Mix`] without an imatrix, [`Anchor::Free`] with one.
    Auto,
    /// Start from llama-quantize's mix of the base type and move bytes only by confident
    /// trades ([`anchored`]), when the mix fits the budget.
    Mix,
    /// The allocation that minimises the metric within the budget, anywhere.
    Free,
}

impl Anchor {
    /// The anchor of a `--budget-anchor` value: `auto`, `mix` or `free`.
    pub fn from_name(s: &str) -> Option<Anchor> {
        match s {
            "auto" => Some(Anchor::Auto),
            "mix" => Some(Anchor::Mix),
            "free" => Some(Anchor::Free),
            _ => None,
        }
    }

    /// Whether a budget anchors on the mix, given whether its errors are imatrix-weighted.
    pub fn on_mix(self, weighted: bool) -> bool {
        match self {
            Anchor::Auto => !weighted,
            Anchor::Mix => true,
            Anchor::Free => false,
        }
    }
}

/// From `reference` (one option per tensor), the trades that pass `margin`: repeatedly the
/// upgrade saving the most error per byte, paid for by the downgrade (of another tensor)
/// adding the least error per byte when the bytes left do not cover it, made only when the
/// error saved is at least `margin` times the error added. A `reference` over `limit` (a mix
/// at the budget's size, whose header lacks the keys ours adds) first sheds the bytes it is
/// over by the downgrades adding the least error per byte freed. Returns `None` when even
/// every tensor's cheapest option is over `limit`.
pub fn anchored(
    tensors: &[Vec<Choice>],
    reference: &[usize],
    limit: u64,
    margin: f64,
) -> Option<Vec<usize>> {
    let cost = |c: &[usize]| -> u64 { c.iter().zip(tensors).map(|(&k, o)| o[k].cost).sum() };
    let mut choice = reference.to_vec();
    let mut used = cost(&choice);
    while used > limit {
        // (added error per byte freed, tensor, option)
        let mut down: Option<(f64, usize, usize)> = None;
        for (i, opts) in tensors.iter().enumerate() {
            let cur = opts[choice[i]];
            for (k, o) in opts.iter().enumerate() {
                if o.cost < cur.cost {
                    let rate = (o.error - cur.error).max(0.0) / (cur.cost - o.cost) as f64;
                    if down.is_none_or(|(r, ..)| rate < r) {
                        down = Some((rate, i, k));
                    }
                }
            }
        }
        let (_, i, k) = down?;
        used = used - tensors[i][choice[i]].cost + tensors[i][k].cost;
        choice[i] = k;
    }
    for _ in 0..tensors.len().saturating_mul(TRADES_PER_TENSOR) {
        let Some(trade) = best_trade(tensors, &choice, limit - used, margin) else {
            break;
        };
        for (i, k) in trade {
            used = used - tensors[i][choice[i]].cost + tensors[i][k].cost;
            choice[i] = k;
        }
    }
    Some(choice)
}

/// The best-rated upgrade and, when `left` bytes do not pay for it, the cheapest-rated
/// downgrade of another tensor that does; `None` when no such pair passes `margin`.
fn best_trade(
    tensors: &[Vec<Choice>],
    choice: &[usize],
    left: u64,
    margin: f64,
) -> Option<Vec<(usize, usize)>> {
    // Upgrades by error saved per byte, best first.
    let mut ups: Vec<(f64, usize, usize, u64, f64)> = Vec::new();
    for (i, opts) in tensors.iter().enumerate() {
        let cur = opts[choice[i]];
        for (k, o) in opts.iter().enumerate() {
            if o.cost > cur.cost && o.error < cur.error {
                let dc = o.cost - cur.cost;
                let saved = cur.error - o.error;
                ups.push((saved / dc as f64, i, k, dc, saved));
            }
        }
    }
    ups.sort_by(|a, b| b.0.total_cmp(&a.0));
    for &(_, i, k, dc, saved) in ups.iter().take(8) {
        if dc <= left {
            return Some(vec![(i, k)]);
        }
        let need = dc - left;
        // The downgrade of another tensor freeing at least `need` bytes that adds the least.
        let mut down: Option<(f64, usize, usize)> = None;
        for (j, opts) in tensors.iter().enumerate() {
            if j == i {
                continue;
            }
            let cur = opts[choice[j]];
            for (m, o) in opts.iter().enumerate() {
                if o.cost < cur.cost && cur.cost - o.cost >= need {
                    let added = (o.error - cur.error).max(0.0);
                    if down.is_none_or(|(a, ..)| added < a) {
                        down = Some((added, j, m));
                    }
                }
            }
        }
        if let Some((added, j, m)) = down {
            if saved >= margin * added && saved > added {
                return Some(vec![(j, m), (i, k)]);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(cost: u64, error: f64) -> Choice {
        Choice { cost, error }
    }

    #[test]
    fn a_confident_trade_is_made_and_a_marginal_one_is_not() {
        // Tensor 0's upgrade saves 10; tensor 1's downgrade adds 1 (confident), tensor 2's
        // adds 6 (not: 10 < 2 x 6).
        let tensors = vec![
            vec![c(10, 12.0), c(20, 2.0)],
            vec![c(10, 3.0), c(20, 2.0)],
            vec![c(10, 9.0), c(20, 3.0)],
        ];
        let got = anchored(&tensors, &[0, 1, 1], 50, 2.0).unwrap();
        // The default margin makes no trade.
        assert_eq!(
            anchored(&tensors, &[0, 1, 1], 50, ANCHOR_MARGIN),
            Some(vec![0, 1, 1])
        );
        assert_eq!(got, vec![1, 0, 1]);
        let tensors2 = vec![tensors[0].clone(), tensors[2].clone()];
        let got = anchored(&tensors2, &[0, 1], 30, 2.0).unwrap();
        assert_eq!(got, vec![0, 1]);
    }

    #[test]
    fn a_reference_over_the_limit_sheds_bytes_and_the_limit_holds() {
        let tensors = vec![vec![c(10, 5.0), c(30, 1.0)], vec![c(10, 4.0), c(30, 1.0)]];
        assert_eq!(anchored(&tensors, &[1, 1], 15, ANCHOR_MARGIN), None);
        // Over by 10: tensor 1's downgrade adds less error per byte.
        assert_eq!(
            anchored(&tensors, &[1, 1], 50, ANCHOR_MARGIN),
            Some(vec![1, 0])
        );
        let got = anchored(&tensors, &[0, 0], 45, ANCHOR_MARGIN).unwrap();
        let cost: u64 = got.iter().zip(&tensors).map(|(&k, o)| o[k].cost).sum();
        assert!(cost <= 45, "{got:?}");
        assert_eq!(got, vec![1, 0]);
    }

    #[test]
    fn anchor_names_and_defaults() {
        assert_eq!(Anchor::from_name("auto"), Some(Anchor::Auto));
        assert_eq!(Anchor::from_name("mix"), Some(Anchor::Mix));
        assert_eq!(Anchor::from_name("free"), Some(Anchor::Free));
        assert_eq!(Anchor::from_name("x"), None);
        assert!(Anchor::Auto.on_mix(false));
        assert!(!Anchor::Auto.on_mix(true));
    }
}
