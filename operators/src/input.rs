//! Input handles that stamp each row with its source sequence number (`seq`), for programs that
//! feed the operators from their own timely workers.
//!
//! Every row entering the operators needs a `seq`: unique in its input, growing with system
//! time, and in arrival order, since ties (two versions at one event time, deduplication by
//! arrival, the order in which a key's rows of one system time are applied) are broken by it.
//! [`ChangelogInput`] wraps differential's `InputSession` and stamps each row it is given;
//! [`SeqStamp`] is the stamp alone, for inputs built otherwise.
//!
//! # The stamp
//!
//! Worker `w` of `peers` stamps its `n`-th row (from 0) of system time `epoch` with
//!
//! ```text
//! seq = epoch · 2^32 + n · peers + w
//! ```
//!
//! so that, for one input:
//!
//! * stamps are unique across workers and epochs, and grow with system time (every row of epoch
//!   `e` has a smaller `seq` than every row of a later epoch);
//! * each worker's rows are in the order it gave them;
//! * within an epoch the workers' rows interleave: worker 0's first row, worker 1's first row,
//!   ..., worker 0's second row. If an epoch's rows are dealt round-robin by position (row `i`
//!   of the epoch to worker `i % peers`, as [`crate::testing`] deals them), the stamps order
//!   them by position, and results are the same at every worker count.
//!
//! What stays the user's: which worker feeds which row, and in what order. The stamps, and so
//! every result, are a function of that and of the epochs alone, never of thread timing. Two
//! workers feeding rows of one key in the same epoch get them ordered by the interleaving above,
//! which is deterministic but is an arrival order only if the rows were dealt that way.
//!
//! Limits: epochs below `2^32`, and `n · peers + w < 2^32` (about four billion rows an epoch
//! in all); beyond them, and for an epoch that goes backwards, the handle returns a [`SeqError`]
//! and enters nothing.

use std::fmt;

use differential_dataflow::input::InputSession;
use differential_dataflow::ExchangeData;
use timely::dataflow::Scope;
use timely::worker::Worker;

use crate::changelog::Changelog;
use crate::{Change, RowKind, Seq, SysTime};

/// The bits of a `seq` below the epoch: the per-epoch position `n · peers + w`.
const POSITION_BITS: u32 = 32;

/// Why a row could not be stamped (see the [module docs](self) for the limits).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SeqError {
    /// The epoch does not fit the stamp (`epoch >= 2^32`).
    EpochTooLarge {
        /// The worker's index.
        worker: usize,
        /// The epoch asked for.
        epoch: SysTime,
    },
    /// The epoch is before the current one (an input's time never goes back).
    EpochBackwards {
        /// The worker's index.
        worker: usize,
        /// The current epoch.
        current: SysTime,
        /// The epoch asked for.
        epoch: SysTime,
    },
    /// The worker has stamped as many rows in this epoch as the stamp holds.
    EpochFull {
        /// The worker's index.
        worker: usize,
        /// The epoch.
        epoch: SysTime,
    },
}

impl fmt::Display for SeqError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SeqError::EpochTooLarge { worker, epoch } => write!(
                f,
                "worker {worker}: epoch {epoch} is too large for a seq stamp (epochs must be below 2^32)"
            ),
            SeqError::EpochBackwards {
                worker,
                current,
                epoch,
            } => write!(
                f,
                "worker {worker}: cannot go back from epoch {current} to epoch {epoch}"
            ),
            SeqError::EpochFull { worker, epoch } => write!(
                f,
                "worker {worker}: epoch {epoch} holds no more rows (a seq stamp holds 2^32 rows an epoch over all workers); advance to the next epoch"
            ),
        }
    }
}

impl std::error::Error for SeqError {}

/// The `seq` stamp of one worker's rows of one input (see the [module docs](self)).
///
/// # Examples
///
/// ```
/// use differential_temporal_operators::input::SeqStamp;
///
/// // Worker 1 of 2: its rows of epoch 0 are 1, 3, 5, ...; of epoch 1, 2^32 + 1, ...
/// let mut stamp = SeqStamp::new(1, 2);
/// assert_eq!((stamp.next_seq(), stamp.next_seq()), (Ok(1), Ok(3)));
/// stamp.advance_to(1).unwrap();
/// assert_eq!(stamp.next_seq(), Ok((1 << 32) + 1));
/// assert!(stamp.advance_to(0).is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeqStamp {
    worker: u64,
    peers: u64,
    epoch: SysTime,
    /// The position of the next row of this worker in the epoch: `n · peers + w`.
    position: u64,
}

impl SeqStamp {
    /// The stamp of worker `worker` of `peers` (`worker < peers`), at epoch 0.
    pub fn new(worker: usize, peers: usize) -> Self {
        SeqStamp {
            worker: worker as u64,
            peers: peers.max(1) as u64,
            epoch: 0,
            position: worker as u64,
        }
    }

    /// The current epoch.
    pub fn epoch(&self) -> SysTime {
        self.epoch
    }

    /// Moves to `epoch` (the first row there is this worker's row 0 of it).
    ///
    /// Errors: `epoch` is before the current one or at least `2^32`; the stamp is unchanged.
    pub fn advance_to(&mut self, epoch: SysTime) -> Result<(), SeqError> {
        let worker = self.worker as usize;
        if epoch < self.epoch {
            let current = self.epoch;
            return Err(SeqError::EpochBackwards {
                worker,
                current,
                epoch,
            });
        }
        if epoch >> POSITION_BITS != 0 {
            return Err(SeqError::EpochTooLarge { worker, epoch });
        }
        if epoch > self.epoch {
            self.epoch = epoch;
            self.position = self.worker;
        }
        Ok(())
    }

    /// The `seq` of this worker's next row of the current epoch.
    ///
    /// Errors: the epoch has no more positions for this worker ([`SeqError::EpochFull`]).
    pub fn next_seq(&mut self) -> Result<Seq, SeqError> {
        if self.position >> POSITION_BITS != 0 {
            let (worker, epoch) = (self.worker as usize, self.epoch);
            return Err(SeqError::EpochFull { worker, epoch });
        }
        let seq = (self.epoch << POSITION_BITS) | self.position;
        self.position += self.peers;
        Ok(seq)
    }
}

/// An input of changelog rows `(K, Change<V>)` on one worker, each row stamped with its `seq`
/// (see the [module docs](self)): differential's `InputSession`, with rows given as
/// `(key, row)` and the epoch checked instead of asserted.
///
/// # Examples
///
/// One worker's input, fed over two epochs, read as the changelog it is:
///
/// ```
/// use differential_temporal_operators::input::ChangelogInput;
/// use differential_temporal_operators::RowKind;
///
/// let out = timely::execute_directly(|worker| {
///     let mut input = ChangelogInput::<char, i64>::new(worker);
///     let seen = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
///     let sink = seen.clone();
///     worker.dataflow::<u64, _, _>(|scope| {
///         input.to_changelog(scope).into_changes().inspect(move |((k, c), t, _)| {
///             sink.borrow_mut().push((*t, *k, c.seq, c.kind, c.row))
///         });
///     });
///     input.insert('a', 10).unwrap();
///     input.advance_to(1).unwrap();
///     input.update('a', RowKind::Delete, 10).unwrap();
///     input.close();
///     while worker.step() {}
///     seen.take()
/// });
/// assert_eq!(out, vec![(0, 'a', 0, RowKind::Insert, 10), (1, 'a', 1 << 32, RowKind::Delete, 10)]);
/// ```
pub struct ChangelogInput<K, V>
where
    K: ExchangeData,
    V: ExchangeData,
{
    session: InputSession<SysTime, (K, Change<V>), isize>,
    stamp: SeqStamp,
}

impl<K, V> ChangelogInput<K, V>
where
    K: ExchangeData,
    V: ExchangeData,
{
    /// An input on `worker`, at epoch 0.
    pub fn new(worker: &Worker) -> Self {
        ChangelogInput {
            session: InputSession::new(),
            stamp: SeqStamp::new(worker.index(), worker.peers()),
        }
    }

    /// The input's changelog in `scope` (call once, while building the dataflow).
    pub fn to_changelog<'s>(&mut self, scope: Scope<'s, SysTime>) -> Changelog<'s, K, V> {
        Changelog::new(self.session.to_collection(scope))
    }

    /// Enters `row` of `key` as `+I` at the current epoch; returns its `seq`.
    ///
    /// Errors: the epoch is full ([`SeqError::EpochFull`]); nothing is entered.
    pub fn insert(&mut self, key: K, row: V) -> Result<Seq, SeqError> {
        self.update(key, RowKind::Insert, row)
    }

    /// Enters a changelog row of any kind at the current epoch; returns its `seq`.
    ///
    /// Errors: the epoch is full ([`SeqError::EpochFull`]); nothing is entered.
    pub fn update(&mut self, key: K, kind: RowKind, row: V) -> Result<Seq, SeqError> {
        let seq = self.stamp.next_seq()?;
        self.session.insert((key, Change::new(seq, kind, row)));
        Ok(seq)
    }

    /// Moves the input to epoch `epoch`: rows entered later are at `epoch`.
    ///
    /// Errors: `epoch` is before the current one or at least `2^32`; nothing changes.
    pub fn advance_to(&mut self, epoch: SysTime) -> Result<(), SeqError> {
        self.stamp.advance_to(epoch)?;
        self.session.advance_to(epoch);
        Ok(())
    }

    /// Sends the rows entered so far into the dataflow (as `InputSession::flush`).
    pub fn flush(&mut self) {
        self.session.flush();
    }

    /// The current epoch, for `probe.less_than(input.time())`.
    pub fn time(&self) -> &SysTime {
        self.session.time()
    }

    /// Closes the input: no more rows, and its frontier becomes empty.
    pub fn close(self) {
        self.session.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two workers' stamps over two epochs, interleaved by position and growing with the epoch.
    #[test]
    fn stamps_are_unique_and_ordered() {
        let (mut a, mut b) = (SeqStamp::new(0, 2), SeqStamp::new(1, 2));
        let first: Vec<Seq> = [a.next_seq(), b.next_seq(), a.next_seq(), b.next_seq()]
            .into_iter()
            .map(Result::unwrap)
            .collect();
        assert_eq!(first, [0, 1, 2, 3]);
        a.advance_to(3).unwrap();
        b.advance_to(3).unwrap();
        assert_eq!(
            (b.next_seq(), a.next_seq()),
            (Ok((3 << 32) + 1), Ok(3 << 32))
        );
        // Advancing to the current epoch keeps the position.
        a.advance_to(3).unwrap();
        assert_eq!(a.next_seq(), Ok((3 << 32) + 2));
    }

    /// Rows dealt round-robin over the workers are stamped with their positions in their
    /// epoch: the same stamps at 1 and 2 workers.
    #[test]
    fn round_robin_stamps_are_positions_at_any_worker_count() {
        use std::cell::RefCell;
        use std::rc::Rc;
        for workers in [1, 2] {
            let guards = timely::execute(timely::Config::process(workers), |worker| {
                let (index, peers) = (worker.index(), worker.peers());
                let mut input = ChangelogInput::<u8, char>::new(worker);
                let seen = Rc::new(RefCell::new(Vec::new()));
                let sink = Rc::clone(&seen);
                worker.dataflow::<SysTime, _, _>(|scope| {
                    input
                        .to_changelog(scope)
                        .into_changes()
                        .inspect(move |((_, c), t, _)| sink.borrow_mut().push((*t, c.seq, c.row)));
                });
                for (epoch, rows) in ["abc", "de"].into_iter().enumerate() {
                    input.advance_to(epoch as SysTime).unwrap();
                    for row in rows.chars().skip(index).step_by(peers) {
                        input.insert(0, row).unwrap();
                    }
                }
                input.close();
                while worker.step() {}
                seen.take()
            })
            .unwrap();
            let mut all: Vec<_> = guards.join().into_iter().flat_map(|r| r.unwrap()).collect();
            all.sort();
            let e1 = 1 << 32;
            assert_eq!(
                all,
                [
                    (0, 0, 'a'),
                    (0, 1, 'b'),
                    (0, 2, 'c'),
                    (1, e1, 'd'),
                    (1, e1 + 1, 'e')
                ],
                "{workers} worker(s)"
            );
        }
    }

    #[test]
    fn out_of_range_is_an_error_and_changes_nothing() {
        let mut s = SeqStamp::new(1, 2);
        s.advance_to(5).unwrap();
        let before = s.clone();
        let back = s.advance_to(4).unwrap_err();
        assert_eq!(
            back.to_string(),
            "worker 1: cannot go back from epoch 5 to epoch 4"
        );
        let large = s.advance_to(1 << 32).unwrap_err();
        assert_eq!(
            large.to_string(),
            "worker 1: epoch 4294967296 is too large for a seq stamp (epochs must be below 2^32)"
        );
        assert_eq!(s, before);
        // The last position of an epoch, then a full epoch.
        let mut last = SeqStamp {
            position: (1 << 32) - 1,
            ..SeqStamp::new(1, 2)
        };
        assert_eq!(last.next_seq(), Ok((1 << 32) - 1));
        assert_eq!(
            last.next_seq(),
            Err(SeqError::EpochFull {
                worker: 1,
                epoch: 0
            })
        );
    }
}
