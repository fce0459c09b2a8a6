//! Worker-thread counts from the command line (`-j N`, llama-quantize's NTHREADS).

/// The most worker threads a run uses: the CPUs this process may run on. More threads than
/// that only add memory (a stack each) for CPU-bound work, and a hostile or mistyped
/// `-j 1000000` must not spawn a million threads.
pub fn max_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Sets up the global rayon pool for `requested` threads (all CPUs when `None` or 0),
/// capped at [`max_threads`]. Returns the count used and, when the request was capped, a
/// note saying so.
pub fn configure(requested: Option<usize>) -> (usize, Option<String>) {
    let max = max_threads();
    let (n, note) = match requested.filter(|n| *n > 0) {
        Some(n) if n > max => (
            max,
            Some(format!(
                "{n} threads requested; using {max}, the CPUs available"
            )),
        ),
        Some(n) => (n, None),
        None => (max, None),
    };
    let _ = rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build_global();
    (rayon::current_num_threads(), note)
}
