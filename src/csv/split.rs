//! Cutting a CSV byte stream into blocks of whole records without parsing it.
//!
//! A [`Splitter`] scans the stream once with `memchr` for quotes and newlines only. A newline
//! outside quotes (an even number of `"` seen so far) ends a record; a block ends at the first
//! such newline once it holds at least the target number of bytes. The cut points are a function
//! of the file's bytes and the target alone, so block `i` is the same on every worker and for
//! every worker count: a worker keeps the bytes of the blocks it owns and only counts through
//! the others, so parsing is spread across workers while line numbers stay exact.
//!
//! Quoting follows RFC 4180: a `"` inside an unquoted field (`5'6"`) is taken as an opening
//! quote, which can move cut points inside a record; the parser then reports the rows it
//! cannot read. A quote still open at the end of the file is reported with the line where it
//! opened ([`Block::open_quote`]). Records end in `\n` or `\r\n`.

use std::fs::File;
use std::io::{self, BufReader, Read};

use memchr::memchr2_iter;

use crate::error::Error;

/// Size of the read buffer.
const READ_CHUNK: usize = 64 * 1024;

/// A run of whole records of the input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    /// Position of the block in the input: 0, 1, 2, ...
    pub index: u64,
    /// Line number (1-based) on which the block's first byte lies.
    pub first_line: u64,
    /// The block's bytes (whole records, the last one possibly without its newline).
    pub bytes: Vec<u8>,
    /// `Some(line)` if the input ends inside a quoted field opened on `line` (only possible for
    /// the last block).
    pub open_quote: Option<u64>,
}

/// What tells one version of a file from another: its device and inode (on Unix), its size
/// and its modification time. A run records it when it opens a table's file (before any worker
/// reads it) and every worker checks the file it opens against it, so that a file replaced
/// (by a rename) or rewritten while a run reads it is an error naming the file, never a mix of
/// two versions read by different workers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileIdentity {
    device: u64,
    inode: u64,
    len: u64,
    modified: Option<std::time::SystemTime>,
}

impl FileIdentity {
    /// The identity of the file at `path` now.
    ///
    /// Errors: the file cannot be read (the error names it).
    pub fn of(path: &str) -> Result<FileIdentity, Error> {
        let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
        Ok(FileIdentity::from_metadata(&meta))
    }

    fn from_metadata(meta: &std::fs::Metadata) -> FileIdentity {
        #[cfg(unix)]
        let (device, inode) = {
            use std::os::unix::fs::MetadataExt;
            (meta.dev(), meta.ino())
        };
        #[cfg(not(unix))]
        let (device, inode) = (0, 0);
        FileIdentity {
            device,
            inode,
            len: meta.len(),
            modified: meta.modified().ok(),
        }
    }
}

/// Opens a CSV file for reading, decompressing it when its name ends in `.gz`.
pub fn open_input(path: &str) -> Result<Box<dyn Read + Send>, Error> {
    open_version(path, None)
}

/// [`open_input`], checking that the file opened is still the version `identity` names.
///
/// Errors: the file cannot be opened; it changed (another inode, size or modification time:
/// replaced or rewritten since the run opened it), an error naming the file.
pub fn open_version(
    path: &str,
    identity: Option<&FileIdentity>,
) -> Result<Box<dyn Read + Send>, Error> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    if let Some(expected) = identity {
        let meta = file.metadata().map_err(|e| Error::io(path, e))?;
        if FileIdentity::from_metadata(&meta) != *expected {
            return Err(Error::input(
                path,
                "the file changed while the run read it (it was replaced or rewritten after the run opened it, so its workers would read different versions): run again once it no longer changes",
            ));
        }
    }
    if path.ends_with(".gz") {
        Ok(Box::new(flate2::read::MultiGzDecoder::new(BufReader::new(
            file,
        ))))
    } else {
        Ok(Box::new(file))
    }
}

/// A splitter over the CSV file at `path` cutting blocks of at least `block_bytes`, positioned
/// after the header row; the file checked against `identity` when given ([`open_version`]).
pub fn open_blocks(
    path: &str,
    block_bytes: usize,
    identity: Option<&FileIdentity>,
) -> Result<Splitter<Box<dyn Read + Send>>, Error> {
    let mut splitter = Splitter::new(open_version(path, identity)?, block_bytes);
    splitter.header().map_err(|e| Error::io(path, e))?;
    Ok(splitter)
}

/// Cuts a byte stream into a header record and then [`Block`]s (see the module docs).
pub struct Splitter<R> {
    input: R,
    target: usize,
    buf: Vec<u8>,
    pos: usize,
    filled: usize,
    eof: bool,
    /// Line number of the next unread byte.
    line: u64,
    in_quotes: bool,
    /// Whether `"` quotes newlines (CSV), or every newline ends a record (JSON lines).
    quoting: bool,
    /// Line on which the currently open quote was opened.
    quote_line: u64,
    next_index: u64,
}

impl<R: Read> Splitter<R> {
    /// A splitter cutting blocks of at least `target` bytes (1 or more) of CSV records.
    pub fn new(input: R, target: usize) -> Self {
        Splitter {
            quoting: true,
            input,
            target: target.max(1),
            buf: vec![0; READ_CHUNK],
            pos: 0,
            filled: 0,
            eof: false,
            line: 1,
            in_quotes: false,
            quote_line: 0,
            next_index: 0,
        }
    }

    /// A splitter cutting blocks of at least `target` bytes of lines, each newline the end of a
    /// record (JSON lines: a `"` never quotes a newline).
    pub fn lines(input: R, target: usize) -> Self {
        Splitter {
            quoting: false,
            ..Splitter::new(input, target)
        }
    }

    /// Reads the first record (the header row); `None` if the input is empty.
    pub fn header(&mut self) -> io::Result<Option<Block>> {
        self.scan(0, true)
    }

    /// Number of blocks cut so far, owned or not: once [`next_owned`](Self::next_owned) has
    /// returned `None`, the input's block count (the same on every worker).
    pub fn blocks_seen(&self) -> u64 {
        self.next_index
    }

    /// Reads on to the next block whose index `owns` accepts and returns it with its bytes;
    /// `None` at the end of the input. Blocks not owned are scanned (for line numbers and quote
    /// state) but not kept.
    pub fn next_owned(&mut self, owns: impl Fn(u64) -> bool) -> io::Result<Option<Block>> {
        loop {
            let index = self.next_index;
            let keep = owns(index);
            match self.scan(self.target, keep)? {
                None => return Ok(None),
                Some(mut block) => {
                    self.next_index += 1;
                    if keep {
                        block.index = index;
                        return Ok(Some(block));
                    }
                }
            }
        }
    }

    /// Scans one block of at least `target` bytes, keeping its bytes if `keep`.
    fn scan(&mut self, target: usize, keep: bool) -> io::Result<Option<Block>> {
        let first_line = self.line;
        let mut bytes = Vec::new();
        let mut len = 0usize;
        loop {
            if self.pos == self.filled {
                if !self.eof {
                    self.filled = read_full(&mut self.input, &mut self.buf)?;
                    self.pos = 0;
                    self.eof = self.filled == 0;
                }
                if self.eof {
                    if len == 0 {
                        return Ok(None);
                    }
                    let open_quote = self.in_quotes.then_some(self.quote_line);
                    return Ok(Some(Block {
                        index: self.next_index,
                        first_line,
                        bytes,
                        open_quote,
                    }));
                }
            }
            let chunk = &self.buf[self.pos..self.filled];
            let (mut line, mut in_quotes, mut quote_line) =
                (self.line, self.in_quotes, self.quote_line);
            let mut cut = None;
            for i in memchr2_iter(b'"', b'\n', chunk) {
                if chunk[i] == b'"' {
                    if !self.quoting {
                        continue;
                    }
                    in_quotes = !in_quotes;
                    if in_quotes {
                        quote_line = line;
                    }
                } else {
                    line += 1;
                    if !in_quotes && len + i + 1 >= target {
                        cut = Some(i + 1);
                        break;
                    }
                }
            }
            let take = cut.unwrap_or(chunk.len());
            if keep {
                bytes.extend_from_slice(&chunk[..take]);
            }
            (self.line, self.in_quotes, self.quote_line) = (line, in_quotes, quote_line);
            len += take;
            self.pos += take;
            if cut.is_some() {
                return Ok(Some(Block {
                    index: self.next_index,
                    first_line,
                    bytes,
                    open_quote: None,
                }));
            }
        }
    }
}

/// Reads until `buf` is full or the input ends; returns the number of bytes read.
fn read_full(input: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match input.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocks(text: &str, target: usize, owns: impl Fn(u64) -> bool) -> Vec<Block> {
        let mut s = Splitter::new(text.as_bytes(), target);
        let mut out = vec![s.header().unwrap().unwrap()];
        while let Some(b) = s.next_owned(&owns).unwrap() {
            out.push(b);
        }
        out
    }

    fn texts(bs: &[Block]) -> Vec<(u64, u64, &str)> {
        bs.iter()
            .map(|b| {
                (
                    b.index,
                    b.first_line,
                    std::str::from_utf8(&b.bytes).unwrap(),
                )
            })
            .collect()
    }

    #[test]
    fn cuts_at_record_boundaries_outside_quotes() {
        let text = "a,b\n1,\"x\ny\"\n2,z\n3,\"\"\"q\"\n4,w";
        let bs = blocks(text, 1, |_| true);
        assert_eq!(
            texts(&bs),
            vec![
                (0, 1, "a,b\n"),
                (0, 2, "1,\"x\ny\"\n"),
                (1, 4, "2,z\n"),
                (2, 5, "3,\"\"\"q\"\n"),
                (3, 6, "4,w"),
            ]
        );
        assert!(bs.iter().all(|b| b.open_quote.is_none()));
    }

    #[test]
    fn blocks_reach_the_target_and_skipped_blocks_keep_numbering() {
        let text = "h\n1\n2\n3\n4\n5\n";
        let bs = blocks(text, 4, |i| i % 2 == 1);
        assert_eq!(texts(&bs), vec![(0, 1, "h\n"), (1, 4, "3\n4\n")]);
    }

    #[test]
    fn reports_a_quote_open_at_the_end() {
        let bs = blocks("h\n1\n\"2\n3\n", 100, |_| true);
        assert_eq!(bs[1].open_quote, Some(3));
    }

    #[test]
    fn small_read_buffer_boundaries_do_not_matter() {
        // Blocks longer than the read chunk are assembled across reads.
        let row = "x".repeat(1000) + "\n";
        let text = format!("h\n{}", row.repeat(200));
        let bs = blocks(&text, 70_000, |_| true);
        assert_eq!(bs.len(), 4);
        assert_eq!(bs[1].bytes.len(), 70 * 1001);
        assert_eq!(bs[2].first_line, 2 + 70);
    }
}
