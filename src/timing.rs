//! Wall-clock time per named phase of a run (reading the config, the vocabulary, writing
//! tensor data, the final sync, ...), summed per name in the order phases first ran, for
//! `--verbose` reports and the benchmarks' per-phase tables.
//!
//! Recording is process-wide and cheap (one lock per phase, not per tensor); a phase is
//! timed by holding the guard [`phase`] returns.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The phases recorded so far: name and total time, in first-run order.
static PHASES: Mutex<Vec<(&'static str, Duration)>> = Mutex::new(Vec::new());

/// A running phase: its time is added to its name's total when the guard is dropped.
#[must_use = "a phase is timed until its guard is dropped"]
pub struct Phase {
    name: &'static str,
    start: Instant,
}

/// Starts timing `name`.
pub fn phase(name: &'static str) -> Phase {
    Phase {
        name,
        start: Instant::now(),
    }
}

impl Drop for Phase {
    fn drop(&mut self) {
        let took = self.start.elapsed();
        // A poisoned lock only means another thread panicked while recording: the totals
        // are still valid numbers.
        let mut phases = PHASES.lock().unwrap_or_else(|e| e.into_inner());
        match phases.iter_mut().find(|(n, _)| *n == self.name) {
            Some((_, total)) => *total += took,
            None => phases.push((self.name, took)),
        }
    }
}

/// The phases recorded so far (and forgets them): name and total time, in first-run order.
pub fn take() -> Vec<(&'static str, Duration)> {
    std::mem::take(&mut *PHASES.lock().unwrap_or_else(|e| e.into_inner()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Phases of one name add up; names keep their first-run order. (Other tests in this
    /// binary may record phases at the same time: only this test's names are looked at.)
    #[test]
    fn phases_sum_per_name_in_first_run_order() {
        for _ in 0..2 {
            let _a = phase("timing-test a");
            std::thread::sleep(Duration::from_millis(2));
        }
        drop(phase("timing-test b"));
        let got: Vec<_> = take()
            .into_iter()
            .filter(|(n, _)| n.starts_with("timing-test"))
            .collect();
        let names: Vec<&str> = got.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, ["timing-test a", "timing-test b"]);
        assert!(got[0].1 >= Duration::from_millis(4), "{got:?}");
        assert!(!take().iter().any(|(n, _)| n.starts_with("timing-test")));
    }
}
