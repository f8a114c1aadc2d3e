//! The tail of a run: what the process hosting worker 0 does with the gathered output once the
//! dataflow is done (sort it into its deterministic order, consolidate it, encode it as CSV).
//!
//! The workers' threads are idle by then, so the tail runs on as many threads as the process
//! ran workers (`-w N`): sorts are parallel merge sorts, and the output is encoded in rounds of
//! [`ROUND_ROWS`] rows per thread, each thread encoding a contiguous run of rows into its own
//! buffer and the buffers written in order, so the bytes are exactly those of a sequential
//! encoding and memory holds one round of encoded text, not the whole output. With one worker
//! the tail is sequential (no thread is started).

use std::cmp::Ordering;
use std::io::{self, Write};

use rayon::prelude::*;

/// Rows a thread encodes per round.
pub const ROUND_ROWS: usize = 4096;

/// The workers a run with timely configuration `config` has in this process: the threads its
/// tail may use.
pub fn threads(config: &timely::Config) -> usize {
    use timely::CommunicationConfig as C;
    match &config.communication {
        C::Thread => 1,
        C::Process(n) | C::ProcessBinary(n) => *n,
        C::Cluster { threads, .. } => *threads,
    }
}

/// The threads a run's tail may use (see the [module documentation](self)).
pub struct Tail {
    pool: Option<rayon::ThreadPool>,
}

impl Tail {
    /// A tail on `threads` threads (the process's worker count); sequential for 1, or when
    /// the threads cannot be started.
    pub fn new(threads: usize) -> Tail {
        let pool = (threads > 1)
            .then(|| {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .thread_name(|i| format!("dtemporal-tail-{i}"))
                    .build()
                    .ok()
            })
            .flatten();
        Tail { pool }
    }

    /// Sorts `items` by `cmp` (stable).
    pub fn sort_by<T: Send>(
        &self,
        items: &mut [T],
        cmp: impl Fn(&T, &T) -> Ordering + Send + Sync,
    ) {
        match &self.pool {
            Some(pool) => pool.install(|| items.par_sort_by(cmp)),
            None => items.sort_by(cmp),
        }
    }

    /// Sorts `items` by `cmp` (unstable: for orders where equal items are equal).
    pub fn sort_unstable_by<T: Send>(
        &self,
        items: &mut [T],
        cmp: impl Fn(&T, &T) -> Ordering + Send + Sync,
    ) {
        match &self.pool {
            Some(pool) => pool.install(|| items.par_sort_unstable_by(cmp)),
            None => items.sort_unstable_by(cmp),
        }
    }

    /// Writes `items` in order to `out`, each encoded by `encode` into a [`csv::Writer`] over a
    /// buffer (no header is written), with a scratch string it may reuse across items (see the
    /// [module documentation](self)). A thread's buffer is reused from round to round, so it
    /// grows during the first rounds only.
    ///
    /// Errors: an error of `encode` or of `out`.
    pub fn write_encoded<T: Sync>(
        &self,
        items: &[T],
        out: &mut dyn Write,
        encode: impl Fn(&T, &mut csv::Writer<&mut Vec<u8>>, &mut String) -> io::Result<()> + Sync,
    ) -> io::Result<()> {
        let encode_run = |run: &[T], buffer: &mut Vec<u8>| -> io::Result<()> {
            buffer.clear();
            let mut writer = csv::Writer::from_writer(buffer);
            let mut scratch = String::new();
            for item in run {
                encode(item, &mut writer, &mut scratch)?;
            }
            writer.flush()
        };
        let Some(pool) = &self.pool else {
            let mut buffer = Vec::new();
            for run in items.chunks(ROUND_ROWS) {
                encode_run(run, &mut buffer)?;
                out.write_all(&buffer)?;
            }
            return Ok(());
        };
        let threads = pool.current_num_threads();
        let mut buffers: Vec<Vec<u8>> = vec![Vec::new(); threads];
        for rows in items.chunks(ROUND_ROWS * threads) {
            let runs = rows.par_chunks(ROUND_ROWS).zip(buffers.par_iter_mut());
            let encoded: Vec<io::Result<()>> =
                pool.install(|| runs.map(|(run, buffer)| encode_run(run, buffer)).collect());
            for (result, buffer) in encoded.into_iter().zip(&buffers) {
                result?;
                out.write_all(buffer)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The encoded bytes and the sort order do not depend on the thread count.
    #[test]
    fn parallel_tail_equals_sequential() {
        let items: Vec<(u64, String)> = (0..20_000u64)
            .map(|i| ((i * 7919) % 1000, format!("r{i},\"x\"")))
            .collect();
        let run = |threads: usize| {
            let tail = Tail::new(threads);
            let mut sorted = items.clone();
            tail.sort_by(&mut sorted, |a, b| a.0.cmp(&b.0));
            let mut out = Vec::new();
            tail.write_encoded(&sorted, &mut out, |(k, s), w, _| {
                w.write_record([k.to_string(), s.clone()])
                    .map_err(io::Error::other)
            })
            .unwrap();
            (sorted, out)
        };
        let (sorted, bytes) = run(1);
        assert!(sorted.windows(2).all(|w| w[0].0 <= w[1].0));
        // Stable: equal keys keep their input order.
        assert!(sorted
            .windows(2)
            .filter(|w| w[0].0 == w[1].0)
            .all(|w| w[0].1[1..]
                .split(',')
                .next()
                .unwrap()
                .parse::<u64>()
                .unwrap()
                < w[1].1[1..]
                    .split(',')
                    .next()
                    .unwrap()
                    .parse::<u64>()
                    .unwrap()));
        assert_eq!(run(3), (sorted, bytes.clone()));
        let text = String::from_utf8(bytes).unwrap();
        assert_eq!(text.lines().count(), 20_000);
        assert!(text.starts_with("0,\"r0,\"\"x\"\"\"\n"));
    }
}
